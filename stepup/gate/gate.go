package gate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/store"
	"go.opentelemetry.io/otel/metric"
)

// Executor runs one tool's effect. It receives the stored effect, never
// the runtime's arguments, and the ticket's idempotency key.
//
// The contract is at least once with the same key: if the gate running a
// call dies, or loses its lease, before the outcome is recorded, another
// gate runs the call again with the same key once the lease has expired.
// Two runs of one ticket never overlap in time (a gate that cannot renew
// its lease cancels the run's context before the lease ends), and an
// executor must not repeat the effect for a key it has seen.
type Executor interface {
	Execute(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)
}

// ExecutorFunc adapts a function to [Executor].
type ExecutorFunc func(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	return f(ctx, e, key)
}

// Defaults of a [Gate].
const (
	// DefaultTTL is how long approvers have, and how long an approval
	// stays executable, when neither the policy nor [WithTTL] says.
	DefaultTTL = 15 * time.Minute
	// DefaultLease is how long an execution is a gate's own before another
	// gate may take it over, when [WithLease] does not say. The owner
	// renews it every third of it while the executor runs.
	DefaultLease = 30 * time.Second
)

// Gate is the trusted side of asu: it decides, parks, verifies approvals
// and runs each approved call at most once. It implements
// [stepup.Runtime] for the agent; approvers reach it through [Gate.Desk],
// administrators through [Gate.Admin]. A Gate is safe for concurrent use,
// and several gates may share one store.
//
// A gate keeps no clock of its own: every time it decides with is the
// store's (the database's, for store/postgres), so gates with skewed
// clocks agree on every expiry.
type Gate struct {
	st        Store
	policy    Policy
	approver  Approver
	renderer  Renderer
	canon     Canon
	grants    Grants
	resolver  canon.Resolver
	executors map[string]Executor
	groups    map[string][]string
	caps      store.Caps
	flood     Flood // nil only with WithoutFloodControlUnsafe
	floodSet  bool  // WithFlood or WithoutFloodControlUnsafe was given
	ttl       time.Duration
	lease     time.Duration
	auditArgs bool
	poll      time.Duration
	key       []byte           // MACs the gate's own approvals; see WithKey
	owner     string           // this gate instance, as the owner of its executions
	local     func() time.Time // this process's clock; see WithLocalClock

	obs      *observer                // logs and metrics; nil reports nothing
	notifier *notifier                // tells approvers a ticket waits; nil tells no one
	judging  *judging                 // a model deciding some classes; nil: people decide all
	dwell    map[string]time.Duration // least time from showing to approval, by class

	mu      sync.Mutex
	notify  chan struct{}      // closed and replaced whenever a ticket changes here
	watched map[string]watched // expired executions Recover has seen, by ticket
}

// New returns a gate on st deciding with policy, whose approvers answer
// through approver (passkey.New for passkeys). Options are checked here,
// not on first use.
func New(st Store, policy Policy, approver Approver, opts ...Option) (*Gate, error) {
	if st == nil || policy == nil || approver == nil {
		return nil, fmt.Errorf("%w: gate needs a store, a policy and an approver", stepup.ErrConfig)
	}
	g := &Gate{
		st: st, policy: policy, approver: approver, renderer: defaultRenderer{}, canon: defaultCanon{},
		grants:    storeGrants{st},
		executors: map[string]Executor{},
		groups:    map[string][]string{},
		ttl:       DefaultTTL, lease: DefaultLease, poll: 50 * time.Millisecond,
		local: time.Now, dwell: defaultDwells(),
		notify: make(chan struct{}), watched: map[string]watched{},
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	if !g.floodSet {
		counters, ok := st.(store.Counters)
		if !ok {
			return nil, fmt.Errorf("%w: the store keeps no flood counters; use WithFlood", stepup.ErrConfig)
		}
		lim, err := flood.New(counters, flood.Limits{}, storeClock(st))
		if err != nil {
			return nil, fmt.Errorf("%w: default flood limits: %v", stepup.ErrConfig, err)
		}
		g.flood = lim
	}
	g.caps = parkCaps(g.caps, g.flood)
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("%w: no randomness: %v", stepup.ErrConfig, err)
	}
	if g.owner == "" {
		g.owner = "gate-" + hex.EncodeToString(id[:])
	}
	if g.key == nil {
		g.key = make([]byte, minKeySize)
		if _, err := rand.Read(g.key); err != nil {
			return nil, fmt.Errorf("%w: no randomness for the gate key: %v", stepup.ErrConfig, err)
		}
	}
	return g, nil
}

// now reads the store's clock.
func (g *Gate) now(ctx context.Context) (time.Time, error) {
	t, err := g.st.Now(ctx)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// The caller gave up (a Wait that ran out, a cancelled request):
		// say so, not that the store failed.
		return time.Time{}, fmt.Errorf("the store's clock: %w", ctx.Err())
	default:
		return time.Time{}, ticketstore.Err("the store's clock", err)
	}
	return t, nil
}

// atNow runs a deciding store call f at the store's now. The store refuses
// a time more than store.MaxSkew off its own clock; a call that waited
// that long for a lock is asked once more, at a fresh now.
func (g *Gate) atNow(ctx context.Context, f func(now time.Time) error) error {
	for try := 0; ; try++ {
		now, err := g.now(ctx)
		if err != nil {
			return err
		}
		if err = f(now); try == 0 && errors.Is(err, store.ErrClockSkew) {
			continue
		}
		return err
	}
}

// storeClock adapts a store's clock to the plain clock flood control
// takes; a failed read is the zero time, which flood treats as no time.
func storeClock(c store.Clock) func() time.Time {
	return func() time.Time {
		t, err := c.Now(context.Background())
		if err != nil {
			return time.Time{}
		}
		return t
	}
}

// changed wakes every Wait in this process.
func (g *Gate) changed() {
	g.mu.Lock()
	close(g.notify)
	g.notify = make(chan struct{})
	g.mu.Unlock()
}

func (g *Gate) changes() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notify
}

// Option configures a [Gate].
type Option func(*Gate) error

// minKeySize is the shortest gate key WithKey accepts.
const minKeySize = 32

// watched is an expired execution as Recover first saw it.
type watched struct {
	fence      int64
	leaseUntil time.Time
	since      time.Time // by the gate's local clock
}

// judging is a configured WithModelJudge.
type judging struct {
	j       Judge
	classes map[string]bool
}

// notifier is a configured WithNotifier.
type notifier struct {
	n    notify.Notifier
	link func(stepup.TicketID) string
	busy chan struct{} // one token per notice in flight
}

// observer holds where a gate reports what it decides. A gate without
// WithLogger and WithMeterProvider has none and reports nothing.
type observer struct {
	log          *slog.Logger
	decisions    metric.Int64Counter
	pending      metric.Int64UpDownCounter
	decisionTime metric.Float64Histogram
	refusals     metric.Int64Counter
	lockouts     metric.Int64Counter
	executions   metric.Int64Counter
	reclaims     metric.Int64Counter
}

// defaultDwells are the dwell times a gate starts with, by effect class.
func defaultDwells() map[string]time.Duration {
	return map[string]time.Duration{card.ClassExternal: DefaultDwell, card.ClassIrreversible: DefaultDwell}
}

// DefaultDwell is the least time, by default, between a ticket's card
// being first shown to an approver and an approval of an external or
// irreversible call: long enough to read a card, short enough not to be
// felt. Read and reversible calls have none.
const DefaultDwell = 3 * time.Second
