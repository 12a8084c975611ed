package run

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Execute implements [gate.Gate.Execute].
func (g *Gate) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	a, s, err := g.core.Load(ctx, "execute", id)
	if err = hidden("execute", a, err); err != nil { // practice.go
		return stepup.Result{}, err
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Result{}, err
	}
	refuse := func(err error, reason string) (stepup.Result, error) {
		return g.refuseExecute(ctx, a, now, err, reason)
	}
	if err := runnable(a, now); err != nil {
		return refuse(fmt.Errorf("execute: %w", err), refusalReason(err))
	}
	if err := g.authorized(ctx, a, s, now); err != nil {
		if errors.Is(err, stepup.ErrBadAssertion) {
			g.Lapse(ctx, a, now) //nolint:errcheck // refused either way; a quorum short of votes now reads pending
		}
		return refuse(fmt.Errorf("execute: %w", err), refusalReason(err))
	}
	eff, err := g.Recheck(ctx, a, s)
	if err != nil {
		return refuse(fmt.Errorf("execute: %w", err), "action differs from what was approved")
	}
	exec, ok := g.ExecutorOf(a.Tool)
	if !ok {
		return refuse(fmt.Errorf("execute: %w", stepup.ErrNoExecutor), "no executor for the tool")
	}
	// The key is the approval's, not this attempt's: every run of it, on
	// any replica and after any restore, carries the same one.
	key := receipt.IdempotencyKey(a.ID, a.Nonce)
	if err := ctx.Err(); err != nil {
		return stepup.Result{}, err // nothing spent
	}
	// Re-resolving may have taken a while: spend the approval only if it is
	// still unexpired now, by the store's clock. Once asked, the consume
	// runs to its end: a cancel mid-statement would leave its outcome
	// unknown.
	wctx := context.WithoutCancel(ctx)
	var consumed store.Approval
	err = g.core.AtNow(wctx, func(at time.Time) (err error) {
		consumed, err = g.core.St().Consume(wctx, a.ID, store.Claim{Key: key, Owner: g.core.Owner(), At: at, LeaseUntil: at.Add(g.core.Lease())},
			g.core.Note(audit.DecisionExecuting, "approval spent; running", at))
		return err
	})
	if err != nil {
		if isRefusal(err) {
			err = core.TicketErr("execute", err)
			return refuse(err, refusalReason(err))
		}
		if core.ClockFailed(err) {
			return stepup.Result{}, fmt.Errorf("execute: %w", err) // the consume was never asked
		}
		// The consume may have committed before its answer was lost: the
		// ticket may be executing under this gate's lease, and will then
		// be run by recovery once the lease expires.
		return stepup.Result{}, g.core.ObserveRun(ctx, a, fmt.Errorf("execute: %w: %w: %v", stepup.ErrOutcomeUnknown, stepup.ErrStore, err))
	}
	g.core.Changed(consumed.ID)
	if err := g.spend(ctx, consumed); err != nil {
		return stepup.Result{}, g.core.ObserveRun(ctx, consumed, err)
	}
	res, err := g.Run(ctx, consumed, eff, exec)
	return res, g.core.ObserveRun(ctx, consumed, err)
}

// spend writes, before a consumed ticket runs, that it is about to run,
// to the watermark outside the store, after checking that the store has
// not gone back. Without that entry on disk nothing runs: the ticket stays
// executing under this gate's lease, and recovery tries again, or holds it
// for the operator if the store went back.
func (g *Gate) spend(ctx context.Context, a store.Approval) error {
	if g.core.Mark() == nil {
		return nil
	}
	now, err := g.core.StoreNow(ctx)
	if err == nil {
		err = g.core.Mark().Spend(context.WithoutCancel(ctx), g.core.St(), a, now)
	}
	if err != nil {
		return fmt.Errorf("execute: %w: the run was not started: %w", stepup.ErrOutcomeUnknown, err)
	}
	return nil
}

// runnable refuses a ticket that cannot be spent at now.
func runnable(a store.Approval, now time.Time) error {
	switch a.State {
	case store.Approved:
	case store.Executing, store.Done, store.Failed, store.Abandoned:
		return stepup.ErrConsumed
	case store.Expired:
		return stepup.ErrExpired
	case store.Revoked:
		return stepup.ErrRevoked
	default:
		return fmt.Errorf("%w: ticket is %s", stepup.ErrNotApproved, a.State)
	}
	if !now.Before(a.ExpiresAt) {
		return stepup.ErrExpired
	}
	return nil
}

// isRefusal reports whether a store error is a definite refusal, which
// changed nothing, rather than a failure whose outcome is unknown.
func isRefusal(err error) bool {
	for _, s := range []error{store.ErrNotFound, store.ErrConsumed, store.ErrExpired, store.ErrNotApproved,
		store.ErrRevoked, store.ErrResolved, store.ErrClockSkew, store.ErrInvalid, store.ErrTooLarge} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// refusalReason words a refusal for the audit row.
func refusalReason(err error) string {
	switch {
	case errors.Is(err, stepup.ErrConsumed):
		return "approval already used"
	case errors.Is(err, stepup.ErrExpired):
		return "approval expired"
	case errors.Is(err, stepup.ErrRevoked):
		return "approval revoked"
	case errors.Is(err, stepup.ErrPolicyChanged):
		return "policy changed since the ticket was decided"
	case errors.Is(err, stepup.ErrBadAssertion):
		return "approval evidence does not verify"
	case errors.Is(err, stepup.ErrNotApproved):
		return "ticket not approved"
	}
	return "approval could not be spent"
}

// Run executes a consumed ticket with its idempotency key under its lease
// and records the outcome, even if ctx ended meanwhile.
func (g *Gate) Run(ctx context.Context, a store.Approval, eff canon.Effect, exec plug.Executor) (stepup.Result, error) {
	runCtx, lost := g.hold(ctx, a)
	defer lost() // a panicking executor must not leave the lease renewed
	out, execErr := exec.Execute(runCtx, eff, a.IdempotencyKey)
	leaseLost := lost()
	wctx := context.WithoutCancel(ctx)
	res := stepup.Result{Ticket: stepup.TicketID(a.ID), IdempotencyKey: a.IdempotencyKey}
	if leaseLost {
		// Another gate may have taken the ticket over: its outcome, not
		// this one's, is recorded.
		return res, fmt.Errorf("execute: %w: the lease could not be renewed", stepup.ErrOutcomeUnknown)
	}
	o := store.Outcome{State: store.Done}
	decision, summary := audit.DecisionExecuted, "ok"
	stored := ticketstore.Result{OK: true}
	if execErr != nil {
		o.State, decision, summary = store.Failed, audit.DecisionFailed, core.Why("executor failed", execErr)
		stored = ticketstore.Result{Error: summary}
	} else if json.Valid(out) {
		stored.Output = out
	} else if out != nil {
		stored.Output, _ = json.Marshal(out) // non-JSON output as a base64 string
	}
	full := stored.Output
	raw, err := json.Marshal(stored)
	if err == nil && len(raw) > store.MaxFieldSize {
		// It ran, and its outcome must be recorded whatever the output's
		// size, or the run would be taken for lost and run again: an
		// output over the store's bound is kept by its size and digest,
		// and handed whole to this caller alone.
		sum := sha256.Sum256(full)
		stored.Output, _ = json.Marshal(fmt.Sprintf("(output over %d bytes: %d bytes, SHA-256 %x)", store.MaxFieldSize, len(full), sum))
		raw, err = json.Marshal(stored)
	}
	if err != nil {
		return res, fmt.Errorf("execute: %w: %w: %v", stepup.ErrOutcomeUnknown, stepup.ErrStore, err)
	}
	o.Result = raw
	if o.At, err = g.core.StoreNow(wctx); err != nil { // it ran: record it whatever the watermark holds
		return res, fmt.Errorf("execute: %w: %w", stepup.ErrOutcomeUnknown, err)
	}
	note := g.core.Note(decision, summary, o.At)
	if _, err := g.core.St().Finish(wctx, a.ID, a.Fence, o, func(t store.Approval, m bool) audit.Record {
		r := note(t, m)
		r.Result = summary
		return r
	}); err != nil {
		// It ran, but its outcome is not recorded: the ticket stays
		// executing and is run again with the same key once the lease
		// expires, or another gate already took it over.
		return res, fmt.Errorf("execute: %w: the outcome could not be recorded: %v", stepup.ErrOutcomeUnknown, err)
	}
	g.core.Changed(a.ID)
	res.Output = full
	if execErr != nil {
		return res, fmt.Errorf("execute: %w: %w", stepup.ErrExecutorFailed, execErr)
	}
	return res, nil
}

// hold keeps ticket a's lease while its executor runs: it renews the lease
// every third of it, and cancels the returned context when it cannot,
// while a third of the lease is still left, so that no other gate's run of
// the ticket can overlap this one. Time left is measured on this process's
// monotonic clock from the last renewal, which is never later than the
// lease's own start, so a skewed wall clock cannot stretch it. A renewal
// is given only the time left: one the store does not answer by then (a
// partitioned database) loses the lease like one it refuses. lost stops
// the renewal and reports whether the lease was lost.
func (g *Gate) hold(ctx context.Context, a store.Approval) (context.Context, func() bool) {
	runCtx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	var (
		wg   sync.WaitGroup
		gone atomic.Bool
	)
	held := g.core.LocalNow() // the lease ran from at most this moment
	keep := g.core.Lease() - g.core.Lease()/3
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(g.core.Lease() / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			asked := g.core.LocalNow()
			left := keep - asked.Sub(held)
			err := context.DeadlineExceeded
			if left > 0 {
				var stopped bool
				stopped, err = g.renewWithin(ctx, a, left, stop)
				if stopped {
					return
				}
			}
			if err == nil {
				held = asked
				continue
			}
			if errors.Is(err, store.ErrFenced) || g.core.LocalNow().Sub(held) >= keep || errors.Is(err, context.DeadlineExceeded) {
				gone.Store(true)
				cancel()
				return
			}
		}
	}()
	var once sync.Once
	return runCtx, func() bool {
		once.Do(func() {
			close(stop)
			wg.Wait()
			cancel()
		})
		return gone.Load()
	}
}

// renewWithin renews ticket a's lease, waiting at most left for the
// store (which may not honour its context) and not past stop. It reports
// whether stop came first, and the renewal's error:
// context.DeadlineExceeded when the store did not answer in time.
func (g *Gate) renewWithin(ctx context.Context, a store.Approval, left time.Duration, stop <-chan struct{}) (bool, error) {
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), left)
	defer rcancel()
	done := make(chan error, 1) // the renewal may outlive this call
	go func() { done <- g.renew(rctx, a) }()
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case err := <-done:
		return false, err
	case <-timer.C:
		return false, context.DeadlineExceeded
	case <-stop:
		return true, nil
	}
}

// renew extends ticket a's lease by a whole lease from the store's now.
func (g *Gate) renew(ctx context.Context, a store.Approval) error {
	now, err := g.core.St().Now(ctx)
	if err != nil {
		return err
	}
	return g.core.St().Renew(ctx, a.ID, g.core.Owner(), a.Fence, now.Add(g.core.Lease()))
}

// authorized checks an approved ticket before it runs, trusting neither
// the database nor the policy it was decided under: the current policy
// must be the one the ticket was decided under and must not deny it now,
// and the approval's evidence must verify (the gate's MAC on its own
// approvals, the approver's Recheck on a person's).
func (g *Gate) authorized(ctx context.Context, a store.Approval, s canon.Sealed, now time.Time) error {
	if a.Tool != plug.GrantTool { // decided by the gate itself, under its own fixed version
		if _, err := g.core.RedecideSealed(ctx, a, s); err != nil {
			return err
		}
	}
	return g.EvidenceHolds(ctx, a, now)
}

// EvidenceHolds verifies an approval's stored evidence: the gate's MAC on
// its own approvals; on a person's, that they may decide the ticket, the
// gate's MAC tying their answer to this row, and the approver's Recheck of
// the answer itself.
func (g *Gate) EvidenceHolds(ctx context.Context, a store.Approval, now time.Time) error {
	r, err := g.core.Route(ctx, a) // once: without a Router, each route asks the policy again
	if err != nil {
		return err
	}
	quorum := core.QuorumOf(r)
	if core.ReservedApprover(a.Approver) {
		if quorum > 1 {
			return fmt.Errorf("%w: the ticket needs %d people; the gate approved it alone", stepup.ErrBadAssertion, quorum)
		}
		if err := g.core.CheckSeal(a, now); err != nil {
			return err
		}
		if id, ok := strings.CutPrefix(a.Approver, core.GrantApprover); ok {
			_, err := g.GrantStands(ctx, id)
			return err
		}
		return nil
	}
	if quorum > 1 || len(a.Votes) > 0 {
		return g.VotesHold(ctx, a, r, now, quorum)
	}
	if err := core.MayDecide(a.Approver, a); err != nil {
		return fmt.Errorf("%w: the approval names no one who may approve", stepup.ErrBadAssertion)
	}
	if users, err := g.core.Deciders(a, r, now); err != nil || !slices.Contains(users, a.Approver) {
		return fmt.Errorf("%w: the approval names someone who may not approve this ticket", stepup.ErrBadAssertion)
	}
	evidence, err := g.core.OpenAnswer(a, now)
	if err != nil {
		return err
	}
	return badEvidence(g.core.Approver().Recheck(ctx, core.AnswerOf(a, evidence)))
}

// Recheck returns the effect to run of ticket a, whose stored effect s
// hashes as a records (see [core.Consistent]), after re-resolving its
// references: what runs must be what was approved, byte for byte and
// content for content. A reference that resolves to other content (or
// no longer resolves) is a changed action: with the same references the
// effect is the one a's digest is of, so it is not hashed again.
func (g *Gate) Recheck(ctx context.Context, a store.Approval, s canon.Sealed) (canon.Effect, error) {
	if s.IsZero() || !s.Digest().Equal(a.Digest) {
		return canon.Effect{}, fmt.Errorf("%w: stored effect does not hash as approved", stepup.ErrEffectChanged)
	}
	eff := s.Effect()
	if len(eff.Refs) == 0 {
		return eff, nil
	}
	refs, err := canon.ResolveAll(ctx, g.core.Resolver(), eff.Refs)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("%w: a reference no longer resolves", stepup.ErrEffectChanged)
	}
	if !slices.Equal(refs, eff.Refs) {
		return canon.Effect{}, stepup.ErrEffectChanged
	}
	return eff, nil
}

// Holds implements [gate.Gate.Holds].
func (g *Gate) Holds(ctx context.Context, id stepup.TicketID) error {
	a, s, err := g.core.Load(ctx, "holds", id)
	if err = hidden("holds", a, err); err != nil { // practice.go
		return err
	}
	if err := g.EvidenceHolds(ctx, a, a.LeaseUntil); err != nil {
		return fmt.Errorf("holds: %w", err)
	}
	if _, err := g.Recheck(ctx, a, s); err != nil {
		return fmt.Errorf("holds: %w", err)
	}
	return nil
}

// Recover implements [gate.Gate.Recover].
func (g *Gate) Recover(ctx context.Context) ([]stepup.Result, error) {
	now, err := g.core.Now(ctx)
	if err != nil {
		return nil, err
	}
	list, err := g.core.St().Expired(ctx, now, 0)
	if err != nil {
		return nil, core.TicketErr("recover", err)
	}
	var results []stepup.Result
	var errs []error
	seen := map[string]bool{}
	defer g.watch.Forget(seen)
	for _, a := range list {
		if strings.HasPrefix(a.IdempotencyKey, plug.ExternalKeyPrefix) {
			continue // consumed by a separate executor: its to finish
		}
		if _, ok := g.ExecutorOf(a.Tool); !ok {
			continue // another replica's tool: left to a gate that can run it
		}
		seen[a.ID] = true
		if !g.watch.Unrenewed(a, g.core.LocalNow(), g.core.Lease()) {
			continue // watched for less than a lease of this gate's own time
		}
		var claimed store.Approval
		err := g.core.AtNow(ctx, func(at time.Time) (err error) {
			claimed, err = g.core.St().Reclaim(ctx, a.ID, a.Fence, store.Claim{Key: a.IdempotencyKey, Owner: g.core.Owner(), At: at,
				LeaseUntil: at.Add(g.core.Lease())}, g.core.Note(audit.DecisionReclaimed, "lease expired; run again with the same key", at))
			return err
		})
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrLeaseLive) {
			continue // another gate took it, or its owner renewed in time
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, core.TicketErr("reclaim", err)))
			continue
		}
		g.core.Changed(a.ID)
		g.core.ObserveReclaimed(ctx, claimed)
		exec, _ := g.ExecutorOf(claimed.Tool)
		// The database is not trusted here either: a row it holds as spent
		// runs again only if it agrees with its effect and its approval's
		// evidence verifies. The policy is not asked again: the approval
		// was spent under it, and a run once begun is finished with the
		// same key (at least once).
		s, err := core.Consistent(claimed)
		if err != nil {
			errs = append(errs, g.abandon(ctx, claimed, err, "the stored ticket does not match its effect"))
			continue
		}
		if err := g.EvidenceHolds(ctx, claimed, claimed.LeaseUntil); Transient(err) || errors.Is(err, core.ErrMisbehaved) {
			// Nothing is known about the evidence (the store failed, or
			// the approver misbehaved): the ticket stays executing under
			// this gate's fresh lease, and is taken up again once that
			// expires.
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, err))
			continue
		} else if err != nil {
			errs = append(errs, g.abandon(ctx, claimed, err, "approval evidence does not verify"))
			continue
		}
		eff, err := g.Recheck(ctx, claimed, s)
		if err != nil {
			errs = append(errs, g.abandon(ctx, claimed, err, "action differs from what was approved"))
			continue
		}
		if err := g.spend(ctx, claimed); err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, err))
			continue
		}
		res, err := g.Run(ctx, claimed, eff, exec)
		_ = g.core.ObserveRun(ctx, claimed, err)
		if err != nil && !errors.Is(err, stepup.ErrExecutorFailed) {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, err))
			continue
		}
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

// abandon finishes a reclaimed execution that cannot run: it is recorded
// abandoned, never run.
func (g *Gate) abandon(ctx context.Context, a store.Approval, cause error, why string) error {
	now, err := g.core.Now(ctx)
	if err != nil {
		return errors.Join(cause, err)
	}
	raw, _ := json.Marshal(ticketstore.Result{Error: why})
	note := g.core.Note(audit.DecisionAbandoned, why, now)
	_, err = g.core.St().Finish(ctx, a.ID, a.Fence, store.Outcome{State: store.Abandoned, Result: raw, At: now},
		func(t store.Approval, m bool) audit.Record {
			r := note(t, m)
			r.Result = "not run"
			return r
		})
	if err != nil {
		return errors.Join(fmt.Errorf("recover %s: %w", a.ID, cause), core.TicketErr("recover: finish", err))
	}
	g.core.Changed(a.ID)
	g.core.ObserveAbandoned(ctx, a, why)
	return fmt.Errorf("recover %s: %w", a.ID, cause)
}

// Maintain implements [gate.Gate.Maintain].
func (g *Gate) Maintain(ctx context.Context, interval time.Duration, report func(error)) error {
	if interval <= 0 {
		interval = g.core.Lease() / 3
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := g.advanceMark(ctx)
		if !core.IsRolledBack(err) { // held, nothing else can be done: said once
			_, rerr := g.Recover(ctx)
			_, serr := g.Sweep(ctx)
			err = errors.Join(err, rerr, serr, g.prune(ctx))
		}
		if err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// prune deletes counters nobody reads any more ([core.Gate.Prune]) on
// the first pass and then once every [core.PruneEvery].
func (g *Gate) prune(ctx context.Context) error {
	now, err := g.core.Now(ctx)
	if err != nil {
		return err
	}
	last := g.pruned.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < core.PruneEvery || !g.pruned.CompareAndSwap(last, now.UnixNano()) {
		return nil
	}
	_, err = g.core.Prune(ctx, now)
	return err
}

// advanceMark checks the store against the watermark and writes the mark
// up to the store's head, so that a rollback losing decisions between
// runs is seen too.
func (g *Gate) advanceMark(ctx context.Context) error {
	if g.core.Mark() == nil {
		return nil
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return err
	}
	return g.core.Mark().Advance(ctx, g.core.St(), now)
}

// Runnable implements [gate.Gate.Runnable].
func (g *Gate) Runnable(ctx context.Context, id stepup.TicketID) (plug.Runnable, error) {
	a, s, err := g.core.Load(ctx, "runnable", id)
	if err = hidden("runnable", a, err); err != nil { // practice.go
		return plug.Runnable{}, err
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return plug.Runnable{}, err
	}
	if err := runnable(a, now); err != nil {
		return plug.Runnable{}, fmt.Errorf("runnable: %w", err)
	}
	if err := g.authorized(ctx, a, s, now); err != nil {
		return plug.Runnable{}, fmt.Errorf("runnable: %w", err)
	}
	eff, err := g.Recheck(ctx, a, s)
	if err != nil {
		return plug.Runnable{}, fmt.Errorf("runnable: %w", err)
	}
	return plug.Runnable{ID: id, Digest: a.Digest, Effect: eff, Approver: a.Approver, Nonce: a.Nonce,
		ExpiresAt: a.ExpiresAt, Now: now}, nil
}

// IssueGrant runs an approved [GrantTool] ticket: it is consumed with a key
// naming the ticket, and [grantExecutor] stores the grant under the
// ticket's id. A crash in between leaves the ticket executing;
// [Gate.Recover] stores it with the same key.
func (g *Gate) IssueGrant(ctx context.Context, a store.Approval) (stepup.Ticket, error) {
	s, err := g.core.RecheckStored(a)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	at, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	consumed, err := g.core.St().Consume(ctx, a.ID, store.Claim{Key: core.GrantKeyPrefix + a.ID, Owner: g.core.Owner(), At: at,
		LeaseUntil: at.Add(g.core.Lease())}, g.core.Note(audit.DecisionExecuting, "issuing the grant", at))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("grant", err)
	}
	g.core.Changed(a.ID)
	if _, err := g.Run(ctx, consumed, s.Effect(), grantExecutor{g: g}); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	done, err := g.core.St().Get(ctx, a.ID)
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("grant", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return core.View(done, now), nil
}
