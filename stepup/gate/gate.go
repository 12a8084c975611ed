package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Store is what the gate keeps durably: tickets and their single use,
// approvers' credentials, enrollment invites, the flood counters, grants
// and the audit chain. Every backend in store/ implements it.
type Store interface {
	store.Approvals
	store.Credentials
	store.Invites
	store.Counters
	store.Grants
	store.AuditLog
}

// Executor runs one tool's effect. It receives the stored effect, never
// the runtime's arguments, and an idempotency key: a recovered execution
// passes the same key again, and the executor must not repeat the effect
// for a key it has seen.
type Executor interface {
	Execute(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)
}

// ExecutorFunc adapts a function to [Executor].
type ExecutorFunc func(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	return f(ctx, e, key)
}

// DefaultTTL is how long approvers have, and how long an approval stays
// executable, when neither the policy nor [WithTTL] says.
const DefaultTTL = 15 * time.Minute

// Gate is the trusted side of asu: it decides, parks, verifies approvals
// and runs each approved call at most once. It implements [Runtime] for the
// agent; approvers reach it through [Gate.Approvals], administrators
// through [Gate.Admin]. A Gate is safe for concurrent use, and several
// gates may share one store.
type Gate struct {
	st        Store
	policy    Policy
	now       func() time.Time
	resolver  canon.Resolver
	executors map[string]Executor
	approver  Approver
	groups    map[string][]string
	caps      store.Caps
	flood     *flood.Limiter // nil only with WithoutFloodControlUnsafe
	floodSet  bool           // WithFlood or WithoutFloodControlUnsafe was given
	ttl       time.Duration
	auditArgs bool
	poll      time.Duration

	key []byte // MACs the gate's own approvals; see WithKey

	mu     sync.Mutex
	notify chan struct{} // closed and replaced whenever a ticket changes here
}

// Option configures a [Gate].
type Option func(*Gate) error

// WithClock sets the gate's clock (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(g *Gate) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", stepup.ErrConfig)
		}
		g.now = now
		return nil
	}
}

// WithResolver resolves the references calls name (default: none, so every
// reference is marked unbound on the card).
func WithResolver(r canon.Resolver) Option {
	return func(g *Gate) error { g.resolver = r; return nil }
}

// WithExecutor registers the executor of tool. A tool without one is
// decided and approved but never run.
func WithExecutor(tool string, e Executor) Option {
	return func(g *Gate) error {
		if tool == "" || e == nil {
			return fmt.Errorf("%w: executor needs a tool and an implementation", stepup.ErrConfig)
		}
		if ReservedTool(tool) {
			return fmt.Errorf("%w: tool names starting with %q are the gate's own", stepup.ErrConfig, ReservedToolPrefix)
		}
		if _, dup := g.executors[tool]; dup {
			return fmt.Errorf("%w: two executors for %q", stepup.ErrConfig, tool)
		}
		g.executors[tool] = e
		return nil
	}
}

// WithKey sets the key (at least 32 bytes, from a secret store) with which
// the gate MACs the approvals it makes itself: a call the policy allowed,
// or one a grant covered. Execute runs such a ticket only if its MAC
// verifies, so a database writer without the key cannot make a call run.
// Gates sharing a store must share the key; without WithKey each gate
// draws a random one, and an allowed or granted ticket then runs only on
// the gate that allowed it.
func WithKey(key []byte) Option {
	return func(g *Gate) error {
		if len(key) < minKeySize {
			return fmt.Errorf("%w: gate key must be at least %d bytes", stepup.ErrConfig, minKeySize)
		}
		g.key = bytes.Clone(key)
		return nil
	}
}

// WithApproverGroup names a group of approvers that policies route tickets
// to (Decision.Approvers, Timeout.EscalateTo).
func WithApproverGroup(name string, users ...string) Option {
	return func(g *Gate) error {
		if name == "" || len(users) == 0 {
			return fmt.Errorf("%w: approver group needs a name and users", stepup.ErrConfig)
		}
		for _, u := range users {
			if u == "" || isAgent(u) || reservedApprover(u) {
				return fmt.Errorf("%w: approver group %q names an agent or a reserved name", stepup.ErrConfig, name)
			}
		}
		if _, dup := g.groups[name]; dup {
			return fmt.Errorf("%w: approver group %q given twice", stepup.ErrConfig, name)
		}
		g.groups[name] = slices.Clone(users)
		return nil
	}
}

// WithPendingCaps bounds the live pending tickets per session and per user
// (zero: no cap). With flood control on (the default), the gate parks with
// the stricter of these caps and the limiter's, field by field: a cap here
// can only tighten the limiter's.
func WithPendingCaps(c store.Caps) Option {
	return func(g *Gate) error {
		if c.PerSession < 0 || c.PerUser < 0 {
			return fmt.Errorf("%w: negative cap", stepup.ErrConfig)
		}
		g.caps = c
		return nil
	}
}

// WithTTL sets how long approvers have, and how long an approval stays
// executable, when the policy does not say (default 15 minutes).
func WithTTL(d time.Duration) Option {
	return func(g *Gate) error {
		if d <= 0 {
			return fmt.Errorf("%w: TTL must be positive", stepup.ErrConfig)
		}
		g.ttl = d
		return nil
	}
}

// WithAuditArgsUnsafe writes the arguments themselves into audit records,
// not only their digest. Arguments may hold secrets; the audit log then
// holds them too.
func WithAuditArgsUnsafe() Option {
	return func(g *Gate) error { g.auditArgs = true; return nil }
}

// WithPollInterval sets how often Wait re-reads a ticket decided by
// another gate sharing the store (default 50ms). Decisions made by this
// gate wake waiters at once.
func WithPollInterval(d time.Duration) Option {
	return func(g *Gate) error {
		if d <= 0 {
			return fmt.Errorf("%w: poll interval must be positive", stepup.ErrConfig)
		}
		g.poll = d
		return nil
	}
}

// New returns a gate on st deciding with policy, whose approvers answer
// through approver (passkey.New for passkeys). Options are checked here,
// not on first use.
func New(st Store, policy Policy, approver Approver, opts ...Option) (*Gate, error) {
	if st == nil || policy == nil || approver == nil {
		return nil, fmt.Errorf("%w: gate needs a store, a policy and an approver", stepup.ErrConfig)
	}
	g := &Gate{
		st: st, policy: policy, approver: approver, now: time.Now,
		executors: map[string]Executor{},
		groups:    map[string][]string{},
		ttl:       DefaultTTL, poll: 50 * time.Millisecond,
		notify: make(chan struct{}),
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	if !g.floodSet {
		lim, err := flood.New(st, flood.Limits{}, g.now)
		if err != nil {
			return nil, fmt.Errorf("%w: default flood limits: %v", stepup.ErrConfig, err)
		}
		g.flood = lim
	}
	if g.key == nil {
		g.key = make([]byte, minKeySize)
		if _, err := rand.Read(g.key); err != nil {
			return nil, fmt.Errorf("%w: no randomness for the gate key: %v", stepup.ErrConfig, err)
		}
	}
	g.caps = g.parkCaps()
	g.executors[GrantTool] = grantExecutor{g: g}
	return g, nil
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
