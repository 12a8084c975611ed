package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/store"
)

// A refused Execute spends nothing and runs nothing: its audit row is a
// [receipt.DecisionNotRun], never the "failed" of a run whose tool
// failed. An agent may ask to execute a spent, expired or revoked ticket
// as often as it likes, so repeated refusals are rate-limited in the
// chain: the first refusal of each kind (its reason, and the ticket's
// state) per ticket is written, and identical ones within [NotRunWindow] of it (by the
// store's clock) are only counted, in memory; the next one written after
// the window says how many it stands for. The chain then grows by at most
// one row per ticket, state, reason and window on each gate (a ticket's
// state changes only by a decision, which has its own row), however often
// Execute is called, as long as fewer than [ticketstore.MaxRefusalKinds] tickets are
// refused within a window (beyond that the oldest are forgotten, and
// their next refusal is written again; see [ticketstore.RefusalLog]). A store failure or a cancelled
// call is not a refusal (see [Transient]): it writes no row.

// NotRunWindow is how long identical refusals of one ticket's Execute
// are counted rather than written.
const NotRunWindow = ticketstore.RefusalWindow

// refuseExecute answers a refused Execute of ticket a at now: err, after
// reporting it and, unless an identical refusal was written within the
// window, recording it as a [receipt.DecisionNotRun] row with reason.
// A transient err records nothing: the Execute may simply be asked again.
func (g *Gate) refuseExecute(ctx context.Context, a store.Approval, now time.Time, err error, reason string) (stepup.Result, error) {
	if Transient(err) {
		return stepup.Result{}, err
	}
	if m := core.Misbehaviour(err); m != "" {
		reason = "the approval could not be checked: " + m
	}
	g.core.ObserveRefused(ctx, a, reason)
	write, repeats := g.notRun.Admit(a.ID, a.State, reason, now)
	if !write {
		return stepup.Result{}, err
	}
	if repeats > 0 {
		reason = fmt.Sprintf("%s (and %d identical refusals since the last row)", reason, repeats)
	}
	if _, aerr := g.core.St.AppendAudit(context.WithoutCancel(ctx), g.core.Record(a, receipt.DecisionNotRun, reason, now)); aerr != nil {
		return stepup.Result{}, errors.Join(err, fmt.Errorf("%w: the refusal could not be recorded", stepup.ErrStore))
	}
	return stepup.Result{}, err
}
