package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// SessionsEnded starts the counter key of every sign-out of a session of
// a site beside the gate (package desk's EndSession). Flood control's keys
// all start "flood/", so no flood count is read as a sign-out, nor a
// sign-out counted as requests.
const SessionsEnded = "session/v1/ended/"

// PruneEvery is how often [Gate.Prune] is worth running: what it deletes
// has mattered to nobody for at least [store.CountHorizon].
const PruneEvery = time.Hour

// pruneBatches bounds the batches of one prune, so that a pass over a
// store left unpruned for long ends; the next pass goes on.
const pruneBatches = 10

// Prune deletes the counters nobody reads any more, when the store
// implements [store.CountPruner]: for the built-in flood control, the
// rate counts past their windows ([flood.Limiter.Prune]), then the
// sign-outs of sessions over for more than [store.CountHorizon] (a
// session is refused once over, whatever its sign-out). It returns how
// many keys it deleted.
func (g *Gate) Prune(ctx context.Context, now time.Time) (int, error) {
	total := 0
	var errs []error
	if c, ok := g.cfg.Flood.(containedFlood); ok {
		if lim, ok := c.f.(*flood.Limiter); ok {
			n, err := lim.Prune(ctx)
			total += n
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p, ok := g.cfg.St.(store.CountPruner); ok {
		for range pruneBatches {
			n, err := p.PruneCounts(ctx, SessionsEnded, now.Add(-store.CountHorizon), store.MaxPruneKeys)
			total += n
			if err != nil {
				errs = append(errs, fmt.Errorf("prune sign-outs: %w: %w", stepup.ErrStore, err))
			}
			if err != nil || n < store.MaxPruneKeys {
				break
			}
		}
	}
	return total, errors.Join(errs...)
}
