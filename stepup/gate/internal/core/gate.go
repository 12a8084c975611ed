package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Config is what a gate is made of: its parts and settings, as package
// gate's New and options fill them in. [New] checks and completes it;
// from then on it does not change.
type Config struct {
	// The parts, each contained once New has them (ContainPlugins).
	St        store.Gate
	Policy    plug.Policy
	Approver  plug.Approver
	Renderer  Renderer
	Coverage  plug.Coverage
	Resolver  canon.Resolver
	Executors map[string]plug.Executor
	Flood     Flood                    // nil only with WithoutFloodControlUnsafe
	Judging   *JudgeConfig             // a model deciding some classes; nil: people decide all
	Notifier  *NotifyConfig            // tells approvers a ticket waits; nil tells no one
	Obs       *Observer                // logs and metrics; nil reports nothing
	Mark      *Watermark               // the store's high-water mark, kept outside it; nil keeps none
	MarkKeep  plug.Watermarks          // where WithWatermark keeps it
	MarkPeers []plug.Watermarks        // the other gates' keepers, read when it opens
	Keys      keyring.Source           // the ring MACs are made and checked with; nil: Key alone (see KeyRing)
	Local     func() time.Time         // this process's clock; see WithLocalClock
	Dwell     map[string]time.Duration // least time from showing to approval, by class
	Confirm   map[string]bool          // classes whose approver first picks the key value; see confirm.go
	Practice  map[string]*Practice     // practice request rates by approver group; see practice.go
	Second    *SecondPerson            // classes a person below the catch floor may not approve alone; see second_person.go

	// The settings.
	Groups        map[string][]string
	Caps          store.Caps
	FloodSet      bool // WithFlood or WithoutFloodControlUnsafe was given
	TTL           time.Duration
	Lease         time.Duration
	AuditArgs     bool
	Poll          time.Duration
	Key           []byte        // MACs the gate's own approvals; see WithKey
	Owner         string        // this gate instance, as the owner of its executions
	PluginTimeout time.Duration // a plug-in call's deadline when its caller gave none; 0: the defaults
}

// Gate is one gate's state and the machinery its runtime side and its
// desk share. Package gate's Gate is the API over it. Its configuration
// is fixed once [New] returns, and read through methods (St, Policy,
// TTL, ...); what changes while the gate runs (the waiters of Wait,
// refused answers, stragglers) is unexported too.
type Gate struct {
	cfg Config

	// The state, changed while the gate runs.
	waits      store.Hub    // the Waits in this process, woken by ticket
	refused    refusals     // refused answers recorded, so a replay leaves no second row
	early      refusals     // answers refused as too soon, never accepted later (early.go)
	stragglers atomic.Int64 // plug-in calls given up on that have not returned
	bg         background   // work off the agent's path (background.go)
	below      belowFloor   // who is below the catch floor, as last read (second_person.go)
	macs       sync.Map     // secret -> *sync.Pool of HMAC-SHA256 states under it
	single     sync.Once    // makes one, the ring of Key alone
	one        *keyring.Ring
}

// Now reads the store's clock to decide with. With a watermark, a store
// that went back behind it (its chain or its clock) is refused with
// [stepup.ErrRolledBack], and the time is never earlier than one the gate
// already decided with.
func (g *Gate) Now(ctx context.Context) (time.Time, error) {
	t, err := g.StoreNow(ctx)
	if err != nil || g.cfg.Mark == nil {
		return t, err
	}
	return g.cfg.Mark.Clock(ctx, g.cfg.St, t)
}

// StoreNow reads the store's clock as it is, for recording what already
// happened (a run's outcome) and for an operator's review.
func (g *Gate) StoreNow(ctx context.Context) (time.Time, error) {
	t, err := g.cfg.St.Now(ctx)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// The caller gave up (a Wait that ran out, a cancelled request):
		// say so, not that the store failed.
		return time.Time{}, fmt.Errorf("the store's clock: %w", ctx.Err())
	default:
		return time.Time{}, clockErr{ticketstore.Err("the store's clock", err)}
	}
	return t, nil
}

// AtNow runs a deciding store call f at the store's now. The store refuses
// a time more than store.MaxSkew off its own clock; a call that waited
// that long for a lock is asked once more, at a fresh now.
func (g *Gate) AtNow(ctx context.Context, f func(now time.Time) error) error {
	for try := 0; ; try++ {
		now, err := g.Now(ctx)
		if err != nil {
			return err
		}
		if err = f(now); try == 0 && errors.Is(err, store.ErrClockSkew) {
			continue
		}
		return err
	}
}

// StoreClock adapts a store's clock to the plain clock flood control
// takes; a failed read is the zero time, which flood treats as no time.
func StoreClock(c store.Clock) func() time.Time {
	return func() time.Time {
		t, err := c.Now(context.Background())
		if err != nil {
			return time.Time{}
		}
		return t
	}
}

// Changed wakes the Waits on ticket id in this process; one that
// changes nothing for anyone waiting costs a map lookup.
func (g *Gate) Changed(id string) { g.waits.Changed(id) }

// ChangedAll wakes every Wait in this process.
func (g *Gate) ChangedAll() { g.waits.ChangedAll() }

// Changes returns a channel closed at the next change of ticket id in this
// process, and the function that lets it go.
func (g *Gate) Changes(id string) (<-chan struct{}, func()) { return g.waits.Watch(id) }

// MinKeySize is the shortest gate key WithKey accepts.
const MinKeySize = 32

// JudgeConfig is a configured WithModelJudge.
type JudgeConfig struct {
	Judge   plug.Judge
	Classes map[string]bool
}

// NotifyConfig is a configured WithNotifier.
type NotifyConfig struct {
	Notify notify.Notifier
	Link   func(stepup.TicketID) string
	Busy   chan struct{} // one token per notice in flight
}

// Observer holds where a gate reports what it decides. A gate without
// WithLogger and WithMeterProvider has none and reports nothing.
type Observer struct {
	Log          *slog.Logger
	decisions    metric.Int64Counter
	pending      metric.Int64UpDownCounter
	decisionTime metric.Float64Histogram
	refusals     metric.Int64Counter
	lockouts     metric.Int64Counter
	executions   metric.Int64Counter
	reclaims     metric.Int64Counter
	stragglers   metric.Int64UpDownCounter
	practice     metric.Int64Counter
}
