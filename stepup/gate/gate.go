package gate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/run"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
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
type Gate struct{ rt *run.Gate }

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

// New returns a gate on st deciding with policy, whose approvers answer
// through approver (passkey.New for passkeys). Options are checked here,
// not on first use.
func New(st store.Gate, policy plug.Policy, approver plug.Approver, opts ...Option) (*Gate, error) {
	if st == nil || policy == nil || approver == nil {
		return nil, fmt.Errorf("%w: gate needs a store, a policy and an approver", stepup.ErrConfig)
	}
	g := &core.Gate{
		St: st, Policy: policy, Approver: approver, Renderer: card.Renderer{},
		Grants:    core.StoreGrants{St: st},
		Executors: map[string]plug.Executor{},
		Groups:    map[string][]string{},
		TTL:       DefaultTTL, Lease: DefaultLease, Poll: 50 * time.Millisecond,
		Local: time.Now, Dwell: defaultDwells(),
	}
	for _, o := range opts {
		if err := o.apply(g); err != nil {
			return nil, err
		}
	}
	if !g.FloodSet {
		counters, ok := st.(store.Counters)
		if !ok {
			return nil, fmt.Errorf("%w: the store keeps no flood counters; use WithFlood", stepup.ErrConfig)
		}
		lim, err := flood.New(counters, flood.Limits{}, core.StoreClock(st))
		if err != nil {
			return nil, fmt.Errorf("%w: default flood limits: %v", stepup.ErrConfig, err)
		}
		g.Flood = lim
	}
	g.ContainPlugins() // a plug-in's panic, hang or late answer decides nothing
	g.Caps = core.ParkCaps(g.Caps, g.Flood)
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("%w: no randomness: %v", stepup.ErrConfig, err)
	}
	if g.Owner == "" {
		g.Owner = "gate-" + hex.EncodeToString(id[:])
	}
	if g.Key == nil {
		if g.MarkKeep != nil {
			return nil, fmt.Errorf("%w: WithWatermark needs WithKey or WithKeyRing: marks written under a random key cannot be read back", stepup.ErrConfig)
		}
		g.Key = make([]byte, core.MinKeySize)
		if _, err := rand.Read(g.Key); err != nil {
			return nil, fmt.Errorf("%w: no randomness for the gate key: %v", stepup.ErrConfig, err)
		}
	}
	if g.MarkKeep != nil {
		g.Mark = core.NewWatermark(g.MarkKeep, g.KeyRing)
	}
	return &Gate{rt: run.New(g)}, nil
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
