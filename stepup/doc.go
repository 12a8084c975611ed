// Package stepup is the gate: the trusted side of asu that decides every
// tool call an agent proposes, parks the ones that need a person, verifies
// the person's passkey approval against the exact action, and runs each
// approved action at most once.
//
// # Three faces
//
// A [Gate] has three faces, meant for three different parties:
//
//   - [Runtime] (Propose, Wait, Execute) is all the agent runtime gets.
//     Execute takes a ticket id, never arguments: what runs is the effect
//     stored at Propose time, re-resolved and re-hashed right before it
//     runs.
//   - [ApprovalDesk] ([Gate.Approvals]) is the approver's: Prompt shows the
//     card and the WebAuthn request whose challenge is
//     receipt.Challenge(digest, nonce, expiry, card hash); Approve verifies
//     the passkey assertion; Deny refuses. Serve it on an origin the agent
//     API never serves.
//   - [Admin] ([Gate.Admin]) mints one-time invites; passkeys are enrolled
//     only by redeeming one, so the agent cannot enroll a passkey of its
//     own.
//
// # Policy
//
// A [Policy] decides allow, deny or needs-approval, always with a version.
// [Catalog] is the default: each [Tool] has an effect class you declare, a
// JSON Schema for its arguments and [Limit] checks in code. It denies
// unknown tools, and once the session saw untrusted content ([Call].Taint)
// external and irreversible calls need approval. Any error is a denial.
//
// # Tickets
//
// Every call gets a [Ticket]. Allowed calls are stored as approved by the
// policy, so [Gate.Execute] is the single execute-once path; denied calls
// come back at once with a reason meant for the model. A pending ticket
// expires after its [Timeout] with a defined [Outcome]: cancel, escalate to
// another approver group, or propose a named safe alternative.
// [Gate.Sweep] applies timeouts in bulk; Wait and the desk apply them when
// they meet an expired ticket.
//
// # Flood control
//
// A gate admits calls that need approval through a flood.Limiter (property
// P7), by default one with flood's default limits on the gate's own store,
// so replicas sharing a store share the limits. Propose asks the limiter
// before parking (allowed and denied calls are answered at once and never
// count), and a refusal is a denied [Ticket] whose Reason says "rate
// limited" or "locked out" and whose RetryAfter says when to ask again,
// with an audit row like any denial. The desk's Deny counts towards a
// lockout and Approve ends the run; tickets that time out or are cancelled
// count for neither. Park enforces the stricter of the limiter's pending
// caps and [WithPendingCaps], field by field. [WithFlood] sets other
// limits; [WithoutFloodControlUnsafe] turns flood control off.
//
// # Grants
//
// A grant (package grant) is a delegated approval: a user approves once,
// and later calls it covers run without asking (property P6). A grant is
// itself approved with the user's passkey: [ApprovalDesk.Grant] parks a
// ticket of tool [GrantTool] whose effect is the grant, the user approves
// it on the desk like any other ticket, and the approval stores the grant
// under the ticket's id (its receipt is evidence like any approval's). A
// call names the grant it relies on ([Call].Grant); when the policy says
// the call needs approval, the gate takes one use of the grant if it
// covers the call exactly, and the ticket is approved by "grant:<id>" and
// runs through Execute like any other. A grant that does not cover the call,
// is used up or expired is noted in the audit row and a person is asked,
// as if none had been named. A grant never turns a denial into an
// allowance, and never reaches past an approver group its user is not in.
// It applies in a tainted session too: it bounds exactly what runs, so an
// agent steered by untrusted content can do no more than the grant names.
//
// # Execute once
//
// Execute consumes the approval and records the intent to execute with a
// fresh idempotency key in one store transaction, then runs the tool's
// [Executor] with that key. A crash after the consume leaves the ticket
// executing; [Gate.Recover] re-runs it with the same key, never consuming
// it again.
//
// # Audit
//
// Every decision (allow, deny, needs_approval, approved, denied, cancelled,
// executed, failed) is a receipt.AuditRecord appended to the store's hash
// chain, with arguments only by digest unless [WithAuditArgsUnsafe] is set.
//
// # Receipts
//
// [ApprovalDesk.Receipt] turns a passkey-approved ticket into a
// receipt.Receipt: the canonical effect, the card, the nonce, the expiry
// and the raw WebAuthn assertion, which anyone holding only the approver's
// public key verifies offline with receipt.Verify (property P5).
//
// # Separate executors
//
// When the tool runs in another service, the gate does not run it: a
// [TokenIssuer] signs a short-lived EdDSA JWT for an approved ticket
// (jti = ticket id, aud = the effect's executor, the digest and the nonce),
// and the executor's [Verifier] checks the token against the call it is
// about to run, recomputing the digest, and consumes the ticket once in
// the shared store. The executor passes the returned idempotency key to the
// tool and finishes or recovers its runs with [Verifier.Finish] and
// [Verifier.Recover]; [Gate.Recover] leaves them alone.
//
// # Testing
//
// Package stepup/stepuptest has a fake WebAuthn authenticator, a fake clock
// and a one-call harness that builds a gate with an enrolled approver.
package stepup
