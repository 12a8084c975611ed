package gate

import (
	"context"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// Propose decides c. Allowed and denied calls are answered at once; a call
// that needs approval is parked with its canonical effect, digest, card,
// nonce and expiry, and comes back pending.
//
// Every call gets a ticket. An allowed call's ticket is stored approved by
// the policy in one step, so [Gate.Execute] is the one execute-once path
// for every call. A denied call's ticket is not stored; its Reason is
// meant to go back to the model as an observation, and its audit row
// records the refusal. Every decision's audit row is written in the
// transaction that stores it.
//
// An error is returned when a call is over a size limit (canon.MaxArgs,
// canon.MaxEffect, canon.MaxText, store.MaxKeySize, store.MaxTaint:
// [stepup.ErrTooLarge], with the denied ticket whose row records it), and
// when the decision could not be stored or recorded (context ended,
// [stepup.ErrStore] with the cause in the log); the call must then be
// treated as denied.
func (g *Gate) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	return g.rt.Propose(ctx, c)
}

// Wait blocks until ticket id leaves pending, or ctx ends (then it returns
// the ticket as last read with ctx's error). A pending ticket past its
// expiry is timed out on the spot with the policy's outcome, so Wait needs
// no sweeper to return. Decisions made through this gate wake it at once;
// decisions of other gates sharing the store are seen at the next poll.
func (g *Gate) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return g.rt.Wait(ctx, id)
}

// Ticket returns ticket id as it stands now, without waiting. Denied calls
// are not stored, so their ids are not found.
func (g *Gate) Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return g.rt.Ticket(ctx, id)
}

// Requester returns the principal ticket id was proposed for: the user,
// the agent and its delegations.
func (g *Gate) Requester(ctx context.Context, id stepup.TicketID) (canon.Principal, error) {
	return g.rt.Requester(ctx, id)
}

// Cancel implements [stepup.Canceller]: it withdraws pending ticket id, at
// the runtime's request, with an audit row naming reason (kept as
// [Desk.Deny] keeps an approver's). An approval given
// later fails with [stepup.ErrResolved], and the approval page says the
// agent withdrew it.
func (g *Gate) Cancel(ctx context.Context, id stepup.TicketID, reason string) (stepup.Ticket, error) {
	return g.rt.Cancel(ctx, id, reason)
}

// Execute runs the call stored under ticket id, at most once. It takes no
// arguments. Before anything is spent it checks the ticket as it stands:
// approved and unexpired by the store's clock, decided under the current
// policy (else [stepup.ErrPolicyChanged]), its approval's evidence
// verifying (the database is not trusted to approve), and its stored
// effect re-parsed, its references re-resolved and re-hashed to the
// approved digest (else [stepup.ErrEffectChanged]). Then, in one store
// transaction with its audit row, it spends the approval and records the
// intent to execute: a fresh idempotency key, this gate as the owner and a
// lease. It runs the tool's executor with that key, renewing the lease
// meanwhile, and records the outcome.
//
// Of any number of concurrent calls, across gates sharing the store, one
// runs the tool; the others get [stepup.ErrConsumed]. An error says what
// happened to the effect (see package stepup): not run, ran and failed
// ([stepup.ErrExecutorFailed]), or unknown ([stepup.ErrOutcomeUnknown]):
// the ticket stays executing and, once its lease expires, any gate's
// [Gate.Recover] runs it again with the same key.
func (g *Gate) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	return g.rt.Execute(ctx, id)
}

// Runnable checks ticket id as Execute would before spending it, and spends
// nothing. Refusals wrap [stepup.ErrNotFound], [stepup.ErrNotApproved],
// [stepup.ErrConsumed], [stepup.ErrExpired], [stepup.ErrRevoked],
// [stepup.ErrPolicyChanged], [stepup.ErrBadAssertion] or
// [stepup.ErrEffectChanged]. Package exectoken issues execution tokens
// with it.
func (g *Gate) Runnable(ctx context.Context, id stepup.TicketID) (plug.Runnable, error) {
	return g.rt.Runnable(ctx, id)
}

// Holds reports whether the approval of ticket id, in any state, still
// stands as [Gate.Recover] requires before it runs a spent ticket again:
// the stored row agrees with its effect, the approval's evidence verifies
// (its passkey not revoked, its grant standing, the gate's MAC on its
// own), and its references resolve to what was approved. The policy is
// not asked again: the approval was spent under it. An execution token's
// Verifier asks it before handing an interrupted run back.
func (g *Gate) Holds(ctx context.Context, id stepup.TicketID) error {
	return g.rt.Holds(ctx, id)
}

// Recover takes over executions whose owner's lease expired (its gate
// crashed, or lost the store while running them) and finishes them: each
// is re-checked and run again with its SAME idempotency key, never
// consumed again, under a new lease and fencing token, so a stale owner
// can no longer record an outcome over this one. A live owner's executions
// are never touched. Tickets a separate executor consumed (package
// exectoken) are left to it. It returns the results of the executions it
// finished. [Gate.Maintain] calls it continuously.
//
// Expiry by the store's clock makes an execution a candidate; it is taken
// over only once this gate has seen it expired, unrenewed, for a whole
// lease of its own clock ([WithLocalClock]): the first call that sees it
// starts that watch. A step of the database's clock therefore never
// takes a run from a live owner, and two runs of one ticket never overlap
// in time, provided executors return when their context is cancelled (an
// owner that cannot renew cancels its run before a lease of its own time
// has passed). A crashed owner's work resumes about one lease after its
// lease ran out.
func (g *Gate) Recover(ctx context.Context) ([]stepup.Result, error) {
	return g.rt.Recover(ctx)
}

// Sweep applies the timeout outcome to every pending ticket past its
// expiry, by the store's clock, and returns how many it timed out.
// [Gate.Maintain] runs it periodically; [Gate.Wait] and the approver's
// calls also time tickets out when they meet them.
func (g *Gate) Sweep(ctx context.Context) (int, error) {
	return g.rt.Sweep(ctx)
}

// Maintain keeps the gate's shared work done until ctx ends: every
// interval it takes over expired executions ([Gate.Recover]) and times
// out expired pending tickets ([Gate.Sweep]), so a crashed replica's work
// resumes without anyone restarting a gate. On its first pass and then
// once an hour it also deletes, where the store implements
// [store.CountPruner], the counters nobody reads any more: sign-outs of
// sessions over for a day ([Desk.EndSession]) and the built-in flood
// control's counts past their windows ([flood.Limiter.Prune]), so the
// store does not keep a row for every session it ever saw. Run it on
// every gate; errors
// of one pass are handed to report (which may be nil) and the next pass
// runs anyway. It returns ctx's error.
func (g *Gate) Maintain(ctx context.Context, interval time.Duration, report func(error)) error {
	return g.rt.Maintain(ctx, interval, report)
}
