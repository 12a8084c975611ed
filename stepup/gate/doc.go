// Package gate is the trusted side of asu: it decides every tool call an
// agent proposes, parks the ones that need a person, verifies the
// person's answer against the exact action, and runs each approved action
// at most once, across goroutines, processes and replicas sharing a store.
//
// # Three faces
//
// A [Gate] has three faces, for three different parties:
//
//   - stepup.Runtime (Propose, Wait, Execute, and Cancel) is all the agent
//     runtime gets. Execute takes a ticket id, never arguments.
//   - [Desk] ([Gate.Desk]) is the approvers': Prompt shows the card and the
//     request whose challenge is receipt.Challenge(digest, nonce, expiry,
//     card hash); Approve and Deny verify the answer through the
//     plug.Approver; Revoke withdraws an approval before it runs; Queue lists
//     what an approver may decide; Grant asks for a delegated approval;
//     Receipt makes the offline evidence. Serve it on an origin the agent
//     API never serves.
//   - [Admin] ([Gate.Admin]) is the operator's: revoke approvals and
//     grants, list tickets, sign audit checkpoints. Passkeys are enrolled
//     and revoked by package passkey's Enrollment.
//
// # Layout
//
// Each type is documented once, where it is defined: the contracts a part
// is written against are package plug's, the store a gate keeps is
// store.Gate, and the contracts over the card, flood control and receipts
// are this package's [Renderer], [Flood] and [Receipter]. Behind [Gate], [Desk] and [Admin] the work is split by
// concern into internal packages that depend one way: core (the store's
// clock, a ticket loaded and checked against its effect, routes, the
// gate's MAC over approvals, audit notes, flood admission, notices,
// metrics), run (propose, wait, cancel, execute once under a lease,
// recover, sweep), and desk (prompt, show, approve, deny, quorum, dwell,
// revoke, grants, receipts, queues), which builds on run because
// approving a grant issues it and a late approval times a ticket out.
//
// # Pluggable parts
//
// The gate consumes small interfaces, each with a default: plug.Policy
// (package policy's Catalog), plug.Approver (package passkey), [Renderer]
// (card.Renderer; [WithRenderer]), plug.Coverage (grant.Target over the
// store; [WithCoverage]), [Flood] (package flood's Limiter; [WithFlood]),
// store.Gate (per concern: clock, tickets, votes, sweeping, execution,
// grants, audit; every backend in store/ implements it), plug.Executor
// per tool, plug.Judge for a model approver, and canon.Resolver for the
// references calls name.
//
// A renderer of one's own draws its card with card.Custom (its own words
// for the arguments, in package card's frame) or any other way: the gate
// hashes whatever card it returns, stores that card, and the approver's
// passkey signs that hash (P4), so what the approver saw is what was
// signed; a card that does not render again as stored is refused.
//
// Canonicalization is not pluggable. A call is sealed once at Propose by
// package canon (canonical bytes and digest carried from then on), and
// routes, grants, receipts and Execute, which re-hashes the stored effect
// right before it runs, all read it with canon's rules. The effect's
// digest is the protocol (P2): a verifier holding only a receipt
// recomputes it with canon, and a second canonicalizer would be a second
// meaning of the same bytes. A deployment that wants tighter bounds on
// calls says so in its policy (a schema, limits).
//
// # Who may approve
//
// A ticket is decided by the user it runs on behalf of, unless the policy
// names an approver group ([WithApproverGroup]); then by the group's
// members. The requester's agent and delegations, any agent principal and
// the gate's own names never decide, and a call that names no agent is
// denied at propose. Principal ids have one syntax (canon.CheckPrincipalID).
//
// # The policy at execute
//
// Execute decides again with the current policy: a ticket decided under
// another policy version, or one the current policy denies, does not run
// ([stepup.ErrPolicyChanged]: propose again). During a rolling deploy,
// replicas on different catalog versions refuse each other's tickets until
// every replica runs the new version; runtimes re-propose.
//
// # The database is not trusted to approve
//
// Before a ticket runs, by Execute or by recovery, the gate checks that the
// row agrees with the effect it stores (tool, user, requester, policy
// version: what the digest binds) and re-verifies the approval's evidence:
// the gate's MAC ([WithKey]) over the row, which binds the ticket's id, and
// for a person's approval the approver's Recheck of their own answer
// (passkeys: the receipt verified offline against the enrolled key,
// refused once the key is revoked). A database writer holding neither the
// passkeys nor the key cannot make a call run, and an approval copied onto
// another row does not run. Credential rows are sealed the same way when
// the enrollment and the approver share a key (passkey.WithSealKey,
// passkey.RequireSeal), so a credential planted in the table neither
// approves at the desk nor lets a stored approval run.
//
// # Keys that rotate
//
// The key is a ring ([WithKeyRing]; [WithKey] is a ring of one): every
// MAC names the id of the key that made it, one current key makes new
// MACs, and older keys only verify, a retired one until its grace ends by
// the store's clock. Approvals in flight and passkeys enrolled under the
// old key keep working through a rotation, and nothing made under a key
// past its grace runs. Replicas rotate in the order package keyring
// gives, so none makes a MAC another cannot verify yet.
//
// # One transaction per decision, one clock
//
// Every state change and its audit row commit together (store.Note), so
// after any crash every decision the store holds has its row and the
// chain one head. Every time the gate decides with is the store's (the
// database's, for store/postgres); the gate has no clock of its own, so a
// replica with a skewed clock cannot approve or execute after the real
// expiry. Audit times never decrease along the chain.
//
// # Execute once, under a lease
//
// Execute spends the approval and records the intent to execute (the
// approval's idempotency key, this gate as the owner, a lease) in one
// transaction,
// then runs the tool's plug.Executor with that key, renewing the lease every
// third of it and cancelling the executor's context, while a third is
// still left, if it cannot. [Gate.Recover] takes over only executions
// whose lease expired by the store's clock and that it then watched go
// unrenewed for a whole lease of its own clock (so a step of the
// database's clock takes nothing from a live owner), under a new fencing
// token, and runs them again with the same key; a stale owner's outcome
// is refused. [Gate.Maintain]
// does this, and the timeouts of [Gate.Sweep], continuously on every
// gate. Executors see each ticket at least once with one key, never two
// runs at once. The key is receipt.IdempotencyKey of the ticket and its
// nonce: a function of the approval, never of the attempt, the same on
// every replica and after every restore, so a tool that has seen a key
// knows the effect is done.
//
// # A store that goes back
//
// The store is not trusted to move only forward: a restored backup, a
// lost write-ahead log, a failover to a standby that had not received the
// last commits, a point-in-time restore or a clock stepped back all leave
// it behind what the gate had seen, and an approval it had spent looks
// unspent again. With [WithWatermark], the gate keeps a high-water mark
// outside the store (package watermark: a file, one a process): the audit
// chain's length and head hash and the newest time of the store's clock,
// authenticated with the gate's key and chained entry to entry. Before
// every run of an executor the gate checks the store against the mark and
// writes the run to it, durably, before the tool is called; [Gate.Maintain]
// moves the mark up between runs. A store found behind its mark (a chain
// shorter than the mark, a chain that forks from it, a clock read more
// than [ClockStepTolerance] behind the newest time used) is refused:
// every decision and every run answers [stepup.ErrRolledBack], naming
// both heads, across restarts, until an operator reviews the store and
// calls [Admin.Reconcile], which holds every ticket that may have run in
// the history the store lost (pending, approved or executing, and made
// before the newest time the gate had seen), lists the runs the store no
// longer records with their keys, and writes the reconcile into the
// chain. What the mark cannot see: a rollback together with the loss of
// its file (keep it off the database's disk and out of its backups), and
// a rollback losing only decisions made since the last tick and no run
// (nothing ran twice; those approvals are asked again).
//
// An Execute that is refused before anything runs (the ticket spent,
// expired, revoked, not approved, its evidence or policy no longer
// holding) is a [audit.DecisionNotRun] row, never "failed", which is a
// run whose tool failed; identical refusals of one ticket within
// [NotRunWindow] are counted, not written, so an agent cannot grow the
// chain at will. A store that fails for a moment is neither: the
// Execute fails with a retryable [stepup.ErrStore], writes no row, and
// may simply be asked again.
//
// # Plug-ins are contained
//
// A plug-in never decides by misbehaving. Every call of the policy, the
// approver, the [Renderer], the grant check, [Flood], an executor, a model
// judge and the notifier
// runs under a deadline (the caller's, or [DefaultPluginTimeout],
// [DefaultExecuteTimeout], [WithPluginTimeout]) in a goroutine of its own:
// a panic, an error, a hang past the deadline or an answer that comes
// after the call's context ended is a denial, a refused answer, a refused
// Execute or a failed run, with the misbehaviour in the audit row's
// reason (plug.ErrMisbehaved where the gate answers with an error). A
// plug-in that ignores its context keeps its goroutine until it
// returns ([Gate.Stragglers] counts them); a notifier never delays or
// changes a decision.
//
// # Flood control and grants
//
// Calls that would prompt a person are admitted by [Flood] per principal
// (user, agent, session), per agent, per user and per approver, shared
// across replicas through the store. A grant (package grant) is a
// delegated approval signed with the user's passkey; a call it covers
// exactly is stored approved by it, its use taken in the same transaction.
//
// # Separate executors
//
// When the tool runs in another service, package exectoken's TokenIssuer
// hands the runtime a short-lived token for an approved ticket
// ([Gate.Runnable] checks it as Execute would), and the service's Verifier
// spends the ticket in the shared store under its own lease.
package gate
