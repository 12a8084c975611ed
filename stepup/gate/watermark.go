package gate

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// The gate's tolerance is the core's.
var _ = [1]struct{}{}[ClockStepTolerance-core.ClockStepTolerance]

// WithWatermark keeps the store's high-water mark in keep, outside the
// store (package watermark's file beside the service, one a gate
// process). Before every run of an executor, and at every tick of
// [Gate.Maintain], the gate checks that the store has not gone back behind
// the mark (its audit chain shorter than the mark, or forking from it, or
// its clock stepped back past the newest time the gate has decided with)
// and writes the new mark, durably, before the tool is called.
//
// A store found behind its mark, as after restoring a backup, losing a
// write-ahead log, failing over to a standby that had not received the
// last commits, or a point-in-time restore, is refused: every decision
// and every run answers [stepup.ErrRolledBack], naming both heads, until
// an operator reviews the store and calls [Admin.Reconcile]. A call that
// may already have run is then held, never run again silently.
//
// A keeper that holds no mark yet, on a store that already has history,
// is refused the same way: the store may have been restored from a backup
// taken before calls that ran, and the marks that saw them may be the ones
// lost, whatever other gates' marks say. A new replica of a store others
// run starts from a copy of a running replica's keeper (its entries are
// authenticated by the key the replicas share). Peers are the keepers of
// the other gate processes of the same store (package watermark's Peer,
// their files): they are read, never written, when the gate starts, and
// its mark starts from the furthest of them all, so a replica that was
// stopped holds for a store restored behind what another saw since. A
// reconcile recorded in any of them reviewed what every keeper saw before
// it.
//
// The marks are authenticated with the gate's key, so WithWatermark needs
// [WithKey]: a gate with a random key could not read its own marks back,
// and replicas that read each other's share the key. A rollback that
// loses only decisions made since the last tick and no run can go unseen:
// nothing ran twice, and at most those approvals are asked again.
func WithWatermark(keep plug.Watermarks, peers ...plug.Watermarks) Option {
	return option(func(g *core.Config) error {
		if keep == nil {
			return fmt.Errorf("%w: a watermark needs a keeper", stepup.ErrConfig)
		}
		for i, p := range peers {
			if p == nil {
				return fmt.Errorf("%w: watermark peer %d is nil", stepup.ErrConfig, i+1)
			}
		}
		g.MarkKeep, g.MarkPeers = keep, peers
		return nil
	})
}

// ClockStepTolerance is how far a store's clock may read behind the newest
// time a gate with [WithWatermark] has decided with, before the gate takes
// the store for one gone back. Within it the gate decides with the newest
// time, so an expiry is never judged with an earlier time than one used.
const ClockStepTolerance = store.MaxSkew / 2

// Watermark compares the store with the gate's watermark and says what it
// finds, changing nothing: Found is empty when the store is not behind;
// otherwise Lost lists the runs the watermark saw start that the store no
// longer records (their tools may have acted). It fails with
// [stepup.ErrConfig] on a gate without [WithWatermark].
func (ad *Admin) Watermark(ctx context.Context) (plug.Reconciliation, error) {
	return ad.ad.Watermark(ctx)
}

// Reconcile lifts the hold of a gate whose store went back behind its
// watermark, after an operator (by, recorded) has reviewed the store.
// Every ticket the store shows as pending, approved or executing that was
// made before the newest time the gate had seen is held first: pending
// tickets are cancelled, approved ones revoked, executing ones abandoned,
// each with an audit row that says why, so nothing that may have run in
// the history the store lost runs again. The agents propose those calls
// again, and people decide them again. A row records the reconcile with
// both heads, and the watermark starts again from the store's head. A
// store that is not behind is left as it is.
func (ad *Admin) Reconcile(ctx context.Context, by string) (plug.Reconciliation, error) {
	return ad.ad.Reconcile(ctx, by)
}
