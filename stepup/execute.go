package stepup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
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
func (g *Gate) Execute(ctx context.Context, id TicketID) (Result, error) {
	a, err := g.st.Get(ctx, string(id))
	if err != nil {
		return Result{}, storeErr("execute", err)
	}
	now := g.now()
	refuse := func(err error, reason string) (Result, error) {
		if aerr := g.audit(ctx, g.record(a, receipt.DecisionFailed, reason, now)); aerr != nil {
			return Result{}, errors.Join(err, aerr)
		}
		return Result{}, err
	}
	switch a.State {
	case store.Approved:
	case store.Executing, store.Done:
		return refuse(fmt.Errorf("execute: %w", ErrConsumed), "approval already used")
	case store.Expired:
		return refuse(fmt.Errorf("execute: %w", ErrExpired), "approval expired")
	default:
		return refuse(fmt.Errorf("execute: %w: ticket is %s", ErrNotApproved, a.State), "ticket not approved")
	}
	if !now.Before(a.ExpiresAt) {
		return refuse(fmt.Errorf("execute: %w", ErrExpired), "approval expired")
	}
	eff, err := g.recheck(ctx, a)
	if err != nil {
		return refuse(fmt.Errorf("execute: %w", err), "action differs from what was approved")
	}
	exec, ok := g.executors[a.Tool]
	if !ok {
		return refuse(fmt.Errorf("execute: %w", ErrNoExecutor), "no executor for the tool")
	}
	key, err := newKey()
	if err != nil {
		return refuse(fmt.Errorf("execute: %w", err), "no randomness for the idempotency key")
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err // nothing spent
	}
	// Re-resolving may have taken a while: spend the approval only if it is
	// still unexpired now, not when Execute began. Once asked, the consume
	// runs to its end: a cancel mid-statement could otherwise leave the
	// approval spent while the audit row says it was not.
	consumed, err := g.st.Consume(context.WithoutCancel(ctx), a.ID, key, g.now())
	if err != nil {
		err = storeErr("execute", err)
		reason := "approval could not be consumed"
		switch {
		case errors.Is(err, ErrConsumed):
			reason = "approval already used"
		case errors.Is(err, ErrExpired):
			reason = "approval expired"
		}
		return refuse(err, reason)
	}
	g.changed()
	return g.run(ctx, consumed, eff, exec)
}

// run executes a consumed ticket with its idempotency key and records the
// outcome. The outcome is recorded even if ctx ended meanwhile.
func (g *Gate) run(ctx context.Context, a store.Approval, eff canon.Effect, exec Executor) (Result, error) {
	out, execErr := exec.Execute(ctx, eff, a.IdempotencyKey)
	wctx := context.WithoutCancel(ctx)
	now := g.now()
	decision, summary := receipt.DecisionExecuted, "ok"
	stored := storedResult{OK: true}
	if execErr != nil {
		decision, summary = receipt.DecisionFailed, "executor failed"
		stored = storedResult{Error: summary}
	} else if json.Valid(out) {
		stored.Output = out
	} else if out != nil {
		stored.Output, _ = json.Marshal(out) // non-JSON output as a base64 string
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return Result{}, fmt.Errorf("execute: %w: %v", ErrStore, err)
	}
	done, err := g.st.Finish(wctx, a.ID, raw, now)
	if err != nil {
		return Result{}, storeErr("execute: finish", err)
	}
	g.changed()
	r := g.record(done, decision, summary, now)
	r.Result = summary
	res := Result{Ticket: TicketID(a.ID), Output: stored.Output, IdempotencyKey: a.IdempotencyKey}
	if err := g.audit(wctx, r); err != nil {
		return res, err
	}
	if execErr != nil {
		return res, fmt.Errorf("execute: %w: %w", ErrExecutorFailed, execErr)
	}
	return res, nil
}

// storedResult is what Finish records.
type storedResult struct {
	OK     bool            `json:"ok"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// recheck re-parses the stored effect, re-resolves its references and
// re-hashes it: what runs must be what was approved, byte for byte and
// content for content.
func (g *Gate) recheck(ctx context.Context, a store.Approval) (canon.Effect, error) {
	if !canon.Sum(a.Effect).Equal(a.Digest) {
		return canon.Effect{}, ErrEffectChanged
	}
	eff, err := canon.ParseEffect(a.Effect)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("%w: stored effect does not parse", ErrEffectChanged)
	}
	refs, err := canon.ResolveAll(ctx, g.resolver, eff.Refs)
	if err != nil {
		return canon.Effect{}, fmt.Errorf("%w: a reference no longer resolves", ErrEffectChanged)
	}
	eff.Refs = refs
	d, err := eff.Digest()
	if err != nil || !d.Equal(a.Digest) {
		return canon.Effect{}, ErrEffectChanged
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
func (g *Gate) Recover(ctx context.Context) ([]Result, error) {
	list, err := g.st.Recover(ctx)
	if err != nil {
		return nil, storeErr("recover", err)
	}
	var results []Result
	var errs []error
	for _, a := range list {
		if strings.HasPrefix(a.IdempotencyKey, executorKeyPrefix) {
			continue // consumed by a separate executor's Verifier: its to finish
		}
		exec, ok := g.executors[a.Tool]
		if !ok {
			errs = append(errs, fmt.Errorf("recover %s: %w", a.ID, ErrNoExecutor))
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
	raw, _ := json.Marshal(storedResult{Error: "action differs from what was approved"})
	done, err := g.st.Finish(ctx, a.ID, raw, now)
	if err != nil {
		return errors.Join(cause, storeErr("recover: finish", err))
	}
	r := g.record(done, receipt.DecisionFailed, "action differs from what was approved", now)
	r.Result = "not run"
	return errors.Join(fmt.Errorf("recover %s: %w", a.ID, cause), g.audit(ctx, r))
}

func newKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("idempotency key: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
