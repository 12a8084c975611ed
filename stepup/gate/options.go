package gate

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

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

// WithRenderer replaces the approval card's renderer (default: package
// card's). Whatever it renders is still what is signed: the card's hash,
// which covers the renderer's identity, is in the approval challenge.
func WithRenderer(r Renderer) Option {
	return func(g *Gate) error {
		if r == nil {
			return fmt.Errorf("%w: nil renderer", stepup.ErrConfig)
		}
		g.renderer = r
		return nil
	}
}

// WithCanon replaces how calls are sealed into canonical effects
// (default canon.Seal); see [Canon].
func WithCanon(c Canon) Option {
	return func(g *Gate) error {
		if c == nil {
			return fmt.Errorf("%w: nil canon", stepup.ErrConfig)
		}
		g.canon = c
		return nil
	}
}

// WithGrants replaces how a named grant's coverage of a call is decided
// (default grant.Target over the gate's store); see [Grants].
func WithGrants(gr Grants) Option {
	return func(g *Gate) error {
		if gr == nil {
			return fmt.Errorf("%w: nil grants", stepup.ErrConfig)
		}
		g.grants = gr
		return nil
	}
}

// WithKey sets the key (at least 32 bytes, from a secret store) with which
// the gate MACs every approval it stores: those it makes itself (a call the
// policy allowed, or one a grant covered) and people's, whose MAC ties the
// approver's answer to its ticket so that the answer copied onto another
// row does not run. Execute and recovery run a ticket only if its MAC
// verifies, so a database writer without the key cannot make a call run.
// Gates sharing a store must share the key, and keep it across restarts;
// without WithKey each gate draws a random one, and its approvals then run
// only on that gate, in that process.
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
// to (Decision.Approvers, Timeout.EscalateTo). Members are people's
// principal ids ("user:..."); the requester of a ticket never decides it,
// even as a member.
func WithApproverGroup(name string, users ...string) Option {
	return func(g *Gate) error {
		if name == "" || len(users) == 0 {
			return fmt.Errorf("%w: approver group needs a name and users", stepup.ErrConfig)
		}
		for _, u := range users {
			if err := checkPerson(u); err != nil {
				return fmt.Errorf("%w: approver group %q: %v", stepup.ErrConfig, name, err)
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
// executable, when the policy does not say (default [DefaultTTL]).
func WithTTL(d time.Duration) Option {
	return func(g *Gate) error {
		if d <= 0 {
			return fmt.Errorf("%w: TTL must be positive", stepup.ErrConfig)
		}
		g.ttl = d
		return nil
	}
}

// WithLease sets how long an execution stays this gate's before another
// gate sharing the store may take it over and run it again with the same
// idempotency key (default [DefaultLease]). The gate renews the lease
// every third of it while the executor runs, and cancels the executor's
// context if it cannot, before the lease ends. It must exceed 3 ×
// store.MaxSkew, so that a renewal's time is never refused as skewed.
func WithLease(d time.Duration) Option {
	return func(g *Gate) error {
		if d < 3*store.MaxSkew {
			return fmt.Errorf("%w: lease must be at least %v", stepup.ErrConfig, 3*store.MaxSkew)
		}
		g.lease = d
		return nil
	}
}

// WithLocalClock sets the clock the gate measures its own waits with
// (default time.Now, whose readings are monotonic): how long since its
// last renewal of a lease it holds, and how long it has watched another
// owner's expired lease go unrenewed before taking the execution over.
// Deadlines stored in the database are judged by the database's clock;
// these waits are not, so a step of the database's clock neither ends a
// live owner's lease nor lets two runs of one ticket overlap. Tests drive
// it with the fake clock they give the store.
func WithLocalClock(now func() time.Time) Option {
	return func(g *Gate) error {
		if now == nil {
			return fmt.Errorf("%w: nil local clock", stepup.ErrConfig)
		}
		g.local = now
		return nil
	}
}

// WithInstance names this gate instance: the owner recorded on the
// executions it runs (default a random "gate-..." name). Names must be
// unique among the gates sharing a store.
func WithInstance(name string) Option {
	return func(g *Gate) error {
		if name == "" || len(name) > store.MaxKeySize {
			return fmt.Errorf("%w: instance name must be 1 to %d bytes", stepup.ErrConfig, store.MaxKeySize)
		}
		g.owner = name
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

// WithFlood sets the flood control of approval requests. Without it the
// gate uses flood's default limits over the store's counters; to run
// without any, say so with [WithoutFloodControlUnsafe].
func WithFlood(f Flood) Option {
	return func(g *Gate) error {
		if f == nil {
			return fmt.Errorf("%w: nil flood control; use WithoutFloodControlUnsafe to turn it off", stepup.ErrConfig)
		}
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = f, true
		return nil
	}
}

// WithoutFloodControlUnsafe turns flood control off: an agent may then
// prompt people as often as it likes, which is how approval fatigue is
// made. For tests and demos.
func WithoutFloodControlUnsafe() Option {
	return func(g *Gate) error {
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = nil, true
		return nil
	}
}
