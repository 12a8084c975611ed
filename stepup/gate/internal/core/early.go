package core

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// An answer refused because it came too soon after the card was shown
// must never count later: otherwise whoever saw it go by (the approver's
// page, a proxy, the agent reading its own logs) resends the same bytes
// once the dwell is over, and the approval stands although nobody read
// the card for the dwell time. The gate remembers every such answer (by
// hash, per ticket, at most maxRefusals of them) and refuses it for good;
// the approver signs again. The store keeps the same marks
// ([store.Early]), so every replica on it refuses the answer too.

// The same holds for an answer refused for another reason after it
// verified: one given with a look-alike picked (the approver did not
// read the card), or one that needed a second person. Posted again with
// the right pick, or once a second person is no longer needed, it would
// approve what its signer was refused. Authenticators without a signature
// counter (most synced passkeys) accept the same assertion again, so the
// gate marks such an answer as it marks an early one, under a key of its
// own ([Gate.Refused]).

// Early remembers that answer, about ticket a, was refused as too soon,
// here and in the store, until a expires. A mark the store could not
// keep is reported; this gate remembers it regardless.
func (g *Gate) Early(ctx context.Context, a store.Approval, answer []byte) error {
	return g.mark(ctx, a, earlyKey(a.ID, answer))
}

// Refused remembers that answer, about ticket a, verified and was
// refused all the same (a look-alike picked, a second person needed),
// here and in the store, until a expires: it never counts later.
func (g *Gate) Refused(ctx context.Context, a store.Approval, answer []byte) error {
	return g.mark(ctx, a, refusedKey(a.ID, answer))
}

// Marks reports whether answer, about ticket id, was refused after it
// verified before (refused) or as too soon (early), by this gate or any
// other on the store. The answer is read once for both.
func (g *Gate) Marks(ctx context.Context, id string, answer []byte) (refused, early bool, err error) {
	a := identify(answer)
	if refused, err = g.marked(ctx, id, a.key(refusedDomain, id)); err != nil || refused {
		return refused, false, err
	}
	early, err = g.marked(ctx, id, a.key(earlyDomain, id))
	return false, early, err
}

// mark keeps key, about ticket a, here and in the store.
func (g *Gate) mark(ctx context.Context, a store.Approval, key [sha256.Size]byte) error {
	g.remember(key)
	if err := g.cfg.St.MarkEarly(ctx, a.ID, key, a.ExpiresAt); err != nil {
		return fmt.Errorf("%w: %w", stepup.ErrStore, err)
	}
	return nil
}

// remember keeps key in this gate's memory of early answers.
func (g *Gate) remember(key [sha256.Size]byte) {
	r := &g.early
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[key]; ok {
		return
	}
	if r.seen == nil {
		r.seen = make(map[[sha256.Size]byte]struct{})
	}
	if len(r.order) == maxRefusals {
		delete(r.seen, r.order[0])
		r.order = r.order[1:]
	}
	r.seen[key] = struct{}{}
	r.order = append(r.order, key)
}

// marked reports whether key, about ticket id, was marked by this gate
// or any other on the store.
func (g *Gate) marked(ctx context.Context, id string, key [sha256.Size]byte) (bool, error) {
	r := &g.early
	r.mu.Lock()
	_, ok := r.seen[key]
	r.mu.Unlock()
	if ok {
		return true, nil
	}
	ok, err := g.cfg.St.WasEarly(ctx, id, key)
	if err != nil {
		if errors.Is(err, store.ErrClosed) || ctx.Err() != nil {
			return false, err
		}
		return false, fmt.Errorf("%w: %w", stepup.ErrStore, err)
	}
	return ok, nil
}

// The kinds of marks on an answer.
const (
	earlyDomain   = "asu/early\x00"
	refusedDomain = "asu/refused\x00"
)

func earlyKey(id string, answer []byte) [sha256.Size]byte { return answerKey(earlyDomain, id, answer) }

func refusedKey(id string, answer []byte) [sha256.Size]byte {
	return answerKey(refusedDomain, id, answer)
}
