package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup/internal/ticketstore"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Execute runs the call stored under ticket id, at most once. It takes no
// arguments: it re-parses the stored effect, re-resolves its references and
// re-hashes it, and refuses ([ErrEffectChanged]) when the digest differs
// from the approved one. Then, in one store transaction, it spends the
// approval and records the intent to execute with a fresh idempotency key,
// and runs the tool's executor with that key. Of any number of concurrent
// calls, across gates sharing the store, one runs the tool; the others get
// [ErrConsumed].
//
// A panic or crash inside the executor leaves the ticket executing;
// [Gate.Recover] finishes it with the same key.
func (g *Gate) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return stepup.Result{}, ticketstore.Err("execute", err)
	}
	now := g.now()
	refuse := func(err error, reason string) (stepup.Result, error) {
		if aerr := g.audit(ctx, g.record(a, receipt.DecisionFailed, reason, now)); aerr != nil {
			return stepup.Result{}, errors.Join(err, aerr)
		}
		return stepup.Result{}, err
	}
	switch a.State {
	case store.Approved:
	case store.Executing, store.Done:
		return refuse(fmt.Errorf("execute: %w", stepup.ErrConsumed), "approval already used")
	case store.Expired:
		return refuse(fmt.Errorf("execute: %w", stepup.ErrExpired), "approval expired")
	default:
		return refuse(fmt.Errorf("execute: %w: ticket is %s", stepup.ErrNotApproved, a.State), "ticket not approved")
	}
	if !now.Before(a.ExpiresAt) {
		return refuse(fmt.Errorf("execute: %w", stepup.ErrExpired), "approval expired")
	}
	if err := g.authorized(ctx, a); err != nil {
		reason := "approval evidence does not verify"
		if errors.Is(err, stepup.ErrPolicyChanged) {
			reason = "policy changed since the ticket was decided"
		}
		return refuse(fmt.Errorf("execute: %w", err), reason)
	}
	eff, err := g.recheck(ctx, a)
	if err != nil {
		return refuse(fmt.Errorf("execute: %w", err), "action differs from what was approved")
	}
	exec, ok := g.executors[a.Tool]
	if !ok {
		return refuse(fmt.Errorf("execute: %w", stepup.ErrNoExecutor), "no executor for the tool")
	}
	key, err := ticketstore.NewKey()
	if err != nil {
		return refuse(fmt.Errorf("execute: %w", err), "no randomness for the idempotency key")
	}
	if err := ctx.Err(); err != nil {
		return stepup.Result{}, err // nothing spent
	}
	// Re-resolving may have taken a while: spend the approval only if it is
	// still unexpired now, not when Execute began. Once asked, the consume
	// runs to its end: a cancel mid-statement could otherwise leave the
	// approval spent while the audit row says it was not.
	consumed, err := g.st.Consume(context.WithoutCancel(ctx), a.ID, key, g.now())
	if err != nil {
		err = ticketstore.Err("execute", err)
		reason := "approval could not be consumed"
		switch {
		case errors.Is(err, stepup.ErrConsumed):
			reason = "approval already used"
		case errors.Is(err, stepup.ErrExpired):
			reason = "approval expired"
		}
		return refuse(err, reason)
	}
	g.changed()
	return g.run(ctx, consumed, eff, exec)
}

// run executes a consumed ticket with its idempotency key and records the
// outcome. The outcome is recorded even if ctx ended meanwhile.
func (g *Gate) run(ctx context.Context, a store.Approval, eff canon.Effect, exec Executor) (stepup.Result, error) {
	out, execErr := exec.Execute(ctx, eff, a.IdempotencyKey)
	wctx := context.WithoutCancel(ctx)
	now := g.now()
	decision, summary := receipt.DecisionExecuted, "ok"
	stored := ticketstore.Result{OK: true}
	if execErr != nil {
		decision, summary = receipt.DecisionFailed, "executor failed"
		stored = ticketstore.Result{Error: summary}
	} else if json.Valid(out) {
		stored.Output = out
	} else if out != nil {
		stored.Output, _ = json.Marshal(out) // non-JSON output as a base64 string
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return stepup.Result{}, fmt.Errorf("execute: %w: %v", stepup.ErrStore, err)
	}
	done, err := g.st.Finish(wctx, a.ID, raw, now)
	if err != nil {
		return stepup.Result{}, ticketstore.Err("execute: finish", err)
	}
	g.changed()
	r := g.record(done, decision, summary, now)
	r.Result = summary
	res := stepup.Result{Ticket: stepup.TicketID(a.ID), Output: stored.Output, IdempotencyKey: a.IdempotencyKey}
	if err := g.audit(wctx, r); err != nil {
		return res, err
	}
	if execErr != nil {
		return res, fmt.Errorf("execute: %w: %w", stepup.ErrExecutorFailed, execErr)
	}
	return res, nil
}

// authorized checks an approved ticket before it runs, trusting neither
// the database nor the policy it was decided under: the approval's
// evidence must verify (the gate's MAC on its own approvals, the
// approver's Recheck on a person's), and the current policy must be the
// one the ticket was decided under and must not deny it now.
func (g *Gate) authorized(ctx context.Context, a store.Approval) error {
	if a.Tool != GrantTool { // a grant ticket is decided by the gate itself, under its own fixed version
		if _, _, err := g.redecide(ctx, a); err != nil {
			return err
		}
	}
	if reservedApprover(a.Approver) {
		if err := g.checkSeal(a); err != nil {
			return err
		}
	} else {
		if err := mayDecide(a.Approver, a); err != nil {
			return fmt.Errorf("%w: the approval names no one who may approve", stepup.ErrBadAssertion)
		}
		if users, err := g.approversOf(ctx, a); err != nil || !slices.Contains(users, a.Approver) {
			return fmt.Errorf("%w: the approval names someone who may not approve this ticket", stepup.ErrBadAssertion)
		}
		if err := g.approver.Recheck(ctx, answerOf(a)); err != nil {
			if !errors.Is(err, stepup.ErrBadAssertion) {
				err = fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
			}
			return err
		}
	}
	return nil
}

// recheck re-parses the stored effect, re-resolves its references and
// re-hashes it: what runs must be what was approved, byte for byte and
// content for content.
func (g *Gate) recheck(ctx context.Context, a store.Approval) (canon.Effect, error) {
	if !canon.Sum(a.Effect).Equal(a.Digest) {
		return canon.Effect{}, stepup.ErrEffectChanged
	}
	eff, err := canon.ParseEffect(a.Effect)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("%w: stored effect does not parse", stepup.ErrEffectChanged)
	}
	refs, err := canon.ResolveAll(ctx, g.resolver, eff.Refs)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("%w: a reference no longer resolves", stepup.ErrEffectChanged)
	}
	eff.Refs = refs
	d, err := eff.Digest()
	if err != nil || !d.Equal(a.Digest) {
		return canon.Effect{}, stepup.ErrEffectChanged
	}
	return eff, nil
}

// Recover finishes executions a crash interrupted: tickets consumed but
// never finished. Each is re-checked and re-run with its SAME idempotency
// key, never consumed again, so a tool that honours the key acts once.
// Call it at start-up, before serving, on one gate of those sharing the
// store. Tickets a separate executor consumed through a [Verifier] are left
// to that executor's [Verifier.Recover]. It returns the results of the
// executions it finished.
func (g *Gate) Recover(ctx context.Context) ([]stepup.Result, error) {
	list, err := g.st.Recover(ctx)
	if err != nil {
		return nil, ticketstore.Err("recover", err)
	}
	var results []stepup.Result
	var errs []error
	for _, a := range list {
		if strings.HasPrefix(a.IdempotencyKey, ExternalKeyPrefix) {
			continue // consumed by a separate executor's Verifier: its to finish
		}
		exec, ok := g.executors[a.Tool]
		if !ok {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, stepup.ErrNoExecutor))
			continue
		}
		eff, err := g.recheck(ctx, a)
		if err != nil {
			errs = append(errs, g.abandon(ctx, a, err))
			continue
		}
		res, err := g.run(ctx, a, eff, exec)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, err))
			continue
		}
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

// abandon finishes an interrupted execution whose effect changed while the
// gate was down: it does not run.
func (g *Gate) abandon(ctx context.Context, a store.Approval, cause error) error {
	now := g.now()
	raw, _ := json.Marshal(ticketstore.Result{Error: "action differs from what was approved"})
	done, err := g.st.Finish(ctx, a.ID, raw, now)
	if err != nil {
		return errors.Join(cause, ticketstore.Err("recover: finish", err))
	}
	r := g.record(done, receipt.DecisionFailed, "action differs from what was approved", now)
	r.Result = "not run"
	return errors.Join(fmt.Errorf("recover %s: %w", a.ID, cause), g.audit(ctx, r))
}

// ExternalKeyPrefix marks the idempotency keys of tickets consumed by an
// executor in another service (package exectoken): the gate's recovery
// leaves them to that executor.
const ExternalKeyPrefix = "exec-"

// Runnable is a ticket [Gate.Execute] would run now: approved, unexpired,
// unused, its stored effect still hashing to the approved digest with its
// references re-resolved.
type Runnable struct {
	ID        stepup.TicketID
	Digest    canon.Digest
	Effect    canon.Effect
	Approver  string
	Nonce     [32]byte
	ExpiresAt time.Time
	// Now is the gate's time of the check.
	Now time.Time
}

// Runnable checks ticket id as Execute would before spending it, and spends
// nothing. Refusals wrap [stepup.ErrNotFound], [stepup.ErrNotApproved],
// [stepup.ErrConsumed], [stepup.ErrExpired] or [stepup.ErrEffectChanged].
// Package exectoken issues execution tokens with it.
func (g *Gate) Runnable(ctx context.Context, id stepup.TicketID) (Runnable, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return Runnable{}, ticketstore.Err("runnable", err)
	}
	now := g.now()
	switch a.State {
	case store.Approved:
	case store.Executing, store.Done:
		return Runnable{}, fmt.Errorf("runnable: %w", stepup.ErrConsumed)
	case store.Expired:
		return Runnable{}, fmt.Errorf("runnable: %w", stepup.ErrExpired)
	default:
		return Runnable{}, fmt.Errorf("runnable: %w: ticket is %s", stepup.ErrNotApproved, a.State)
	}
	if !now.Before(a.ExpiresAt) {
		return Runnable{}, fmt.Errorf("runnable: %w", stepup.ErrExpired)
	}
	if err := g.authorized(ctx, a); err != nil {
		return Runnable{}, fmt.Errorf("runnable: %w", err)
	}
	eff, err := g.recheck(ctx, a)
	if err != nil {
		return Runnable{}, fmt.Errorf("runnable: %w", err)
	}
	return Runnable{ID: id, Digest: a.Digest, Effect: eff, Approver: a.Approver, Nonce: a.Nonce,
		ExpiresAt: a.ExpiresAt, Now: now}, nil
}
