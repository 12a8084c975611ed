package stepup

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
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

// RelyingParty is the approval site's WebAuthn identity: approvers' passkeys
// are scoped to ID and answer only on Origin, a listener the agent API
// never serves.
type RelyingParty struct {
	ID     string // e.g. "approve.example.com"
	Origin string // e.g. "https://approve.example.com"
	Name   string // shown by the authenticator at enrollment
}

func (rp RelyingParty) check() error {
	u, err := url.Parse(rp.Origin)
	switch {
	case rp.ID == "" || rp.Origin == "":
		return fmt.Errorf("%w: relying party needs an ID and an origin", ErrConfig)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Hostname() != "localhost"):
		return fmt.Errorf("%w: relying party origin must be an https origin", ErrConfig)
	}
	return nil
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

// Gate is the trusted side of asu: it decides, parks, verifies approvals
// and runs each approved call at most once. It implements [Runtime] for the
// agent; approvers reach it through [Gate.Approvals], administrators
// through [Gate.Admin]. A Gate is safe for concurrent use, and several
// gates may share one store.
type Gate struct {
	st        Store
	policy    Policy
	rp        RelyingParty
	now       func() time.Time
	resolver  canon.Resolver
	executors map[string]Executor
	approver  Approver
	groups    map[string]map[string]bool
	caps      store.Caps
	flood     *flood.Limiter // nil only with WithoutFloodControlUnsafe
	floodSet  bool           // WithFlood or WithoutFloodControlUnsafe was given
	ttl       time.Duration
	inviteTTL time.Duration
	auditArgs bool
	poll      time.Duration

	mu     sync.Mutex
	notify chan struct{} // closed and replaced whenever a ticket changes here
}

// Option configures a [Gate].
type Option func(*Gate) error

// WithClock sets the gate's clock (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(g *Gate) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrConfig)
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
			return fmt.Errorf("%w: executor needs a tool and an implementation", ErrConfig)
		}
		if reserved(tool) {
			return fmt.Errorf("%w: tool names starting with %q are the gate's own", ErrConfig, reservedPrefix)
		}
		if _, dup := g.executors[tool]; dup {
			return fmt.Errorf("%w: two executors for %q", ErrConfig, tool)
		}
		g.executors[tool] = e
		return nil
	}
}

// WithApprover replaces the WebAuthn approver with another way of
// producing and verifying answers (a model-based approver, say).
func WithApprover(a Approver) Option {
	return func(g *Gate) error {
		if a == nil {
			return fmt.Errorf("%w: nil approver", ErrConfig)
		}
		g.approver = a
		return nil
	}
}

// WithApproverGroup names a group of approvers that policies route tickets
// to (Decision.Approvers, Timeout.EscalateTo).
func WithApproverGroup(name string, users ...string) Option {
	return func(g *Gate) error {
		if name == "" || len(users) == 0 {
			return fmt.Errorf("%w: approver group needs a name and users", ErrConfig)
		}
		m := make(map[string]bool, len(users))
		for _, u := range users {
			if isAgent(u) {
				return fmt.Errorf("%w: agent %q in approver group", ErrConfig, u)
			}
			m[u] = true
		}
		g.groups[name] = m
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
			return fmt.Errorf("%w: negative cap", ErrConfig)
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
			return fmt.Errorf("%w: TTL must be positive", ErrConfig)
		}
		g.ttl = d
		return nil
	}
}

// WithInviteTTL sets how long an enrollment invite stays redeemable
// (default 24 hours).
func WithInviteTTL(d time.Duration) Option {
	return func(g *Gate) error {
		if d <= 0 {
			return fmt.Errorf("%w: invite TTL must be positive", ErrConfig)
		}
		g.inviteTTL = d
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
			return fmt.Errorf("%w: poll interval must be positive", ErrConfig)
		}
		g.poll = d
		return nil
	}
}

// New returns a gate on st deciding with policy, whose approvers answer
// with passkeys scoped to rp. Options are checked here, not on first use.
func New(st Store, policy Policy, rp RelyingParty, opts ...Option) (*Gate, error) {
	if st == nil || policy == nil {
		return nil, fmt.Errorf("%w: gate needs a store and a policy", ErrConfig)
	}
	if err := rp.check(); err != nil {
		return nil, err
	}
	if rp.Name == "" {
		rp.Name = rp.ID
	}
	g := &Gate{
		st: st, policy: policy, rp: rp, now: time.Now,
		executors: map[string]Executor{},
		groups:    map[string]map[string]bool{},
		ttl:       defaultTimeout, inviteTTL: 24 * time.Hour, poll: 50 * time.Millisecond,
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
			return nil, fmt.Errorf("%w: default flood limits: %v", ErrConfig, err)
		}
		g.flood = lim
	}
	g.caps = g.parkCaps()
	g.executors[GrantTool] = grantExecutor{g: g}
	if g.approver == nil {
		wa, err := NewWebAuthnApprover(st, rp)
		if err != nil {
			return nil, err
		}
		g.approver = wa
	}
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

// storeErr maps a store refusal to the gate's sentinels, keeping the
// store's message for the detail.
func storeErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	case errors.Is(err, store.ErrConsumed):
		return fmt.Errorf("%s: %w", op, ErrConsumed)
	case errors.Is(err, store.ErrExpired):
		return fmt.Errorf("%s: %w", op, ErrExpired)
	case errors.Is(err, store.ErrResolved):
		return fmt.Errorf("%s: %w", op, ErrResolved)
	case errors.Is(err, store.ErrNotApproved):
		return fmt.Errorf("%s: %w", op, ErrNotApproved)
	case errors.Is(err, store.ErrCounter):
		return fmt.Errorf("%s: %w", op, ErrCounter)
	default:
		return fmt.Errorf("%s: %w: %v", op, ErrStore, err)
	}
}

// isAgent reports whether a principal name is an agent's.
func isAgent(name string) bool {
	return len(name) >= 6 && name[:6] == "agent:"
}
