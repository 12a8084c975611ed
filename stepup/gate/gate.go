package gate

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/card"
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
	// DefaultPoll is how often, when [WithPollInterval] does not say, Wait
	// re-reads a ticket on a store that cannot tell it of changes made by
	// other processes.
	DefaultPoll = 50 * time.Millisecond
	// DefaultWatchedPoll is the same on a store that tells ([store.Watcher]:
	// every store in store/): a safety net, since the store wakes Wait when
	// the ticket changes, whichever process changed it.
	DefaultWatchedPoll = 5 * time.Second
)

// New returns a gate on st deciding with policy, whose approvers answer
// through approver (passkey.New for passkeys). Options are checked here,
// not on first use.
func New(st store.Gate, policy plug.Policy, approver plug.Approver, opts ...Option) (*Gate, error) {
	if st == nil || policy == nil || approver == nil {
		return nil, fmt.Errorf("%w: gate needs a store, a policy and an approver", stepup.ErrConfig)
	}
	c := &core.Config{
		St: st, Policy: policy, Approver: approver, Renderer: card.Renderer{},
		Coverage:  core.StoreGrants{St: st},
		Executors: map[string]plug.Executor{},
		Groups:    map[string][]string{},
		TTL:       DefaultTTL, Lease: DefaultLease,
		Local: time.Now, Dwell: defaultDwells(),
	}
	for _, o := range opts {
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	if c.Poll == 0 {
		c.Poll = DefaultPoll
		if _, ok := st.(store.Watcher); ok {
			c.Poll = DefaultWatchedPoll
		}
	}
	g, err := core.New(*c)
	if err != nil {
		return nil, err
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
