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
// # Testing
//
// Package stepup/stepuptest has a fake WebAuthn authenticator, a fake clock
// and a one-call harness that builds a gate with an enrolled approver.
package stepup
