package gate

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
	"go.opentelemetry.io/otel/metric"
)

// Option configures a [Gate]; the With functions of this package make
// them. The zero Option is refused by [New].
type Option struct{ set func(*core.Config) error }

// option makes an Option of the setting set.
func option(set func(*core.Config) error) Option { return Option{set: set} }

// apply sets o on g.
func (o Option) apply(g *core.Config) error {
	if o.set == nil {
		return fmt.Errorf("%w: a zero Option; use the With functions", stepup.ErrConfig)
	}
	return o.set(g)
}

// WithResolver resolves the references calls name (default: none, so every
// reference is marked unbound on the card).
func WithResolver(r canon.Resolver) Option {
	return option(func(g *core.Config) error { g.Resolver = r; return nil })
}

// WithExecutor registers the executor of tool. A tool without one is
// decided and approved but never run.
func WithExecutor(tool string, e plug.Executor) Option {
	return option(func(g *core.Config) error {
		if tool == "" || e == nil {
			return fmt.Errorf("%w: executor needs a tool and an implementation", stepup.ErrConfig)
		}
		if plug.ReservedTool(tool) {
			return fmt.Errorf("%w: tool names starting with %q are the gate's own", stepup.ErrConfig, plug.ReservedToolPrefix)
		}
		if _, dup := g.Executors[tool]; dup {
			return fmt.Errorf("%w: two executors for %q", stepup.ErrConfig, tool)
		}
		g.Executors[tool] = e
		return nil
	})
}

// WithRenderer replaces the approval card's renderer (default:
// card.Renderer); card.Custom builds a card in one's own words. Whatever
// it renders is what is signed: the gate hashes the card it returns, and
// that hash, which covers the renderer's identity, is in the approval
// challenge. See [Renderer].
func WithRenderer(r Renderer) Option {
	return option(func(g *core.Config) error {
		if r == nil {
			return fmt.Errorf("%w: nil renderer", stepup.ErrConfig)
		}
		g.Renderer = r
		return nil
	})
}

// WithCoverage replaces how a named grant's coverage of a call is decided
// (default grant.Target over the gate's store); see plug.Coverage. It can
// narrow what grants cover, never widen it: the grant its user signed
// must still cover the call.
func WithCoverage(gr plug.Coverage) Option {
	return option(func(g *core.Config) error {
		if gr == nil {
			return fmt.Errorf("%w: nil coverage check", stepup.ErrConfig)
		}
		g.Coverage = gr
		return nil
	})
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
	return option(func(g *core.Config) error {
		if len(key) < core.MinKeySize {
			return fmt.Errorf("%w: gate key must be at least %d bytes", stepup.ErrConfig, core.MinKeySize)
		}
		g.Key = bytes.Clone(key)
		return nil
	})
}

// WithApproverGroup names a group of approvers that policies route tickets
// to (Decision.Approvers, Timeout.EscalateTo). Members are people's
// principal ids ("user:..."); the requester of a ticket never decides it,
// even as a member.
func WithApproverGroup(name string, users ...string) Option {
	return option(func(g *core.Config) error {
		if name == "" || len(users) == 0 {
			return fmt.Errorf("%w: approver group needs a name and users", stepup.ErrConfig)
		}
		for _, u := range users {
			if err := core.CheckPerson(u); err != nil {
				return fmt.Errorf("%w: approver group %q: %v", stepup.ErrConfig, name, err)
			}
		}
		if _, dup := g.Groups[name]; dup {
			return fmt.Errorf("%w: approver group %q given twice", stepup.ErrConfig, name)
		}
		g.Groups[name] = slices.Clone(users)
		return nil
	})
}

// WithPendingCaps bounds the live pending tickets per session and per user
// (zero: no cap). With flood control on (the default), the gate parks with
// the stricter of these caps and the limiter's, field by field: a cap here
// can only tighten the limiter's.
func WithPendingCaps(c store.Caps) Option {
	return option(func(g *core.Config) error {
		if c.PerSession < 0 || c.PerUser < 0 {
			return fmt.Errorf("%w: negative cap", stepup.ErrConfig)
		}
		g.Caps = c
		return nil
	})
}

// WithTTL sets how long approvers have, and how long an approval stays
// executable, when the policy does not say (default [DefaultTTL]).
func WithTTL(d time.Duration) Option {
	return option(func(g *core.Config) error {
		if d <= 0 {
			return fmt.Errorf("%w: TTL must be positive", stepup.ErrConfig)
		}
		g.TTL = d
		return nil
	})
}

// WithLease sets how long an execution stays this gate's before another
// gate sharing the store may take it over and run it again with the same
// idempotency key (default [DefaultLease]). The gate renews the lease
// every third of it while the executor runs, and cancels the executor's
// context if it cannot, before the lease ends. It must exceed 3 ×
// store.MaxSkew, so that a renewal's time is never refused as skewed.
func WithLease(d time.Duration) Option {
	return option(func(g *core.Config) error {
		if d < 3*store.MaxSkew {
			return fmt.Errorf("%w: lease must be at least %v", stepup.ErrConfig, 3*store.MaxSkew)
		}
		g.Lease = d
		return nil
	})
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
	return option(func(g *core.Config) error {
		if now == nil {
			return fmt.Errorf("%w: nil local clock", stepup.ErrConfig)
		}
		g.Local = now
		return nil
	})
}

// WithInstance names this gate instance: the owner recorded on the
// executions it runs (default a random "gate-..." name). Names must be
// unique among the gates sharing a store.
func WithInstance(name string) Option {
	return option(func(g *core.Config) error {
		if name == "" || len(name) > store.MaxKeySize {
			return fmt.Errorf("%w: instance name must be 1 to %d bytes", stepup.ErrConfig, store.MaxKeySize)
		}
		g.Owner = name
		return nil
	})
}

// WithAuditArgsUnsafe writes the arguments themselves into audit records,
// not only their digest. Arguments may hold secrets; the audit log then
// holds them too.
func WithAuditArgsUnsafe() Option {
	return option(func(g *core.Config) error { g.AuditArgs = true; return nil })
}

// WithPollInterval sets how often Wait re-reads a ticket that may have
// been decided by another gate sharing the store: [DefaultPoll], or
// [DefaultWatchedPoll] on a store that wakes Wait itself (a
// [store.Watcher]). Decisions made by this gate wake its waiters at once.
func WithPollInterval(d time.Duration) Option {
	return option(func(g *core.Config) error {
		if d <= 0 {
			return fmt.Errorf("%w: poll interval must be positive", stepup.ErrConfig)
		}
		g.Poll = d
		return nil
	})
}

// WithFlood sets the flood control of approval requests. Without it the
// gate uses flood's default limits over the store's counters; to run
// without any, say so with [WithoutFloodControlUnsafe].
func WithFlood(f Flood) Option {
	return option(func(g *core.Config) error {
		if f == nil {
			return fmt.Errorf("%w: nil flood control; use WithoutFloodControlUnsafe to turn it off", stepup.ErrConfig)
		}
		if g.FloodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.Flood, g.FloodSet = f, true
		return nil
	})
}

// WithoutFloodControlUnsafe turns flood control off: an agent may then
// prompt people as often as it likes, which is how approval fatigue is
// made. For tests and demos.
func WithoutFloodControlUnsafe() Option {
	return option(func(g *core.Config) error {
		if g.FloodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.Flood, g.FloodSet = nil, true
		return nil
	})
}

// WithLogger logs every decision the gate makes to l (default: none): one
// record per decision (message "gate decision": decision, tool, class,
// ticket, digest in short form, reason), per execution ("gate
// execution": outcome, tool, class, ticket, digest) and per execution
// taken over from a gate whose lease expired ("gate reclaim"). Arguments
// appear only as the digest's short form; arguments, evidence, nonces,
// tokens, rationales and the free text of an agent's cancellation or an
// approver's denial are never logged. Refusals at execute, failures and
// unknown outcomes are logged at warning level, the rest at info.
func WithLogger(l *slog.Logger) Option {
	return option(func(g *core.Config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", stepup.ErrConfig)
		}
		g.ObserverOf().Log = l
		return nil
	})
}

// WithMeterProvider reports the gate's metrics through the OpenTelemetry
// meter of mp named [ScopeName] (default: none). The instruments, with
// their units and attributes:
//
//	asu.gate.decisions           counter          {decision}  AttrDecision, AttrClass
//	asu.gate.pending             up-down counter  {ticket}    AttrClass
//	asu.gate.decision.duration   histogram        s           AttrDecision, AttrClass
//	asu.gate.flood.refusals      counter          {refusal}   AttrFloodScope, AttrFloodLimit
//	asu.gate.flood.lockouts      counter          {refusal}   AttrFloodScope
//	asu.gate.executions          counter          {execution} AttrOutcome, AttrClass
//	asu.gate.lease.reclaims      counter          {reclaim}   AttrClass
//	asu.gate.plugins.stragglers  up-down counter  {call}
//	asu.gate.practice            counter          {request}   AttrClass, AttrPracticeClass, AttrPracticeOutcome
//
// decisions counts every decision this gate committed: at propose (allow,
// deny, needs_approval, merged), by a person (approved, denied), by the
// clock (expired), by the runtime (cancelled) and by a revocation
// (revoked). The approval rate is approved / (approved + denied).
//
// pending rises when this gate parks a ticket and falls when this gate
// resolves a pending one (approved, denied, expired, cancelled). Gates
// sharing a store each count their own changes, so the sum over the
// replicas is the number of pending tickets parked since they started;
// a replica alone may read negative when its peers parked what it
// decided.
//
// decision.duration is the time from park to the decision, by the
// store's clock, of tickets approved, denied, expired or cancelled.
//
// flood.refusals counts calls flood control or a pending cap refused;
// flood.lockouts counts those refused because approvers denied too many
// of the scope's requests in a row (a subset of refusals, with
// AttrFloodLimit "lockout").
//
// executions counts what became of each call Execute or [Gate.Recover]
// took up (grant issuance is not counted: it is the grant ticket's
// approval); lease.reclaims counts executions this gate took over after
// their owner's lease expired.
//
// plugins.stragglers is how many plug-in calls the gate stopped waiting
// for at their deadline that have not returned yet (see
// [Gate.Stragglers]): a value that keeps growing names a plug-in that
// ignores its context.
//
// practice counts practice requests ([WithPractice]) decided through this
// gate: caught (denied) or missed (approved), by effect class and attack
// class. Summed over the replicas, caught / (caught + missed) is the
// team's catch rate of each class; it names nobody, since the metrics
// carry no principals (each approver's rate, with its interval, is on
// the figures: package stepup/gateway serves them, and as metrics beside
// these when asked to). A practice request counts among the pending while
// it waits, and its decision ends that count.
//
// Through the Prometheus exporter (package stepup/gateway serves one)
// the names become asu_gate_decisions_total, asu_gate_pending,
// asu_gate_decision_duration_seconds, asu_gate_flood_refusals_total,
// asu_gate_flood_lockouts_total, asu_gate_executions_total,
// asu_gate_lease_reclaims_total, asu_gate_plugins_stragglers and
// asu_gate_practice_total, and the attribute keys' dots become
// underscores (asu_decision, asu_effect_class, asu_flood_scope, ...).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return option(func(g *core.Config) error {
		if mp == nil {
			return fmt.Errorf("%w: nil meter provider", stepup.ErrConfig)
		}
		if err := g.ObserverOf().Instruments(mp.Meter(ScopeName)); err != nil {
			return fmt.Errorf("%w: metrics: %v", stepup.ErrConfig, err)
		}
		return nil
	})
}

// WithNotifier has the gate tell approvers when a ticket needs a person:
// after a ticket is parked (not when an identical pending request merges
// into it), the gate hands n a [notify.Notice] naming the ticket, its tool
// and class, the user, the approvers and the expiry, and link(id): the
// approval site's page for the ticket ([gateway.ApprovalLink]). The link
// goes to the people who decide, never back to the agent, and the notice
// holds no arguments or challenge.
//
// Notifying never blocks or changes a decision: the gate calls n in the
// background, at most a few dozen notices at once (more are dropped and
// logged), each given ten seconds; an error is logged and the ticket
// stays in the approvers' queue. [notify.Webhook] is the built-in.
func WithNotifier(n notify.Notifier, link func(stepup.TicketID) string) Option {
	return option(func(g *core.Config) error {
		if n == nil || link == nil {
			return fmt.Errorf("%w: a NotifyConfig needs a Notifier and a link function", stepup.ErrConfig)
		}
		g.Notifier = &core.NotifyConfig{Notify: n, Link: link, Busy: make(chan struct{}, core.MaxNotifying)}
		return nil
	})
}

// WithModelJudge has j decide, as soon as it is parked, every ticket of
// the effect classes named (default: card.ClassExternal alone; an
// irreversible class only when named). The model sees the ticket's card
// and, as untrusted data, the agent's rationale; it approves or denies
// with a reason. Its decision is recorded as a model's: the approver is
// "model:<name>" (a kind only the gate writes), the audit row's reason
// carries the model id and the SHA-256 of the exact prompt and answer, and
// the evidence is the gate's own MAC, so Execute runs a model's approval
// only if the gate made it. A model's approval has no passkey receipt.
// Grant tickets (plug.GrantTool) are always left to their approver.
func WithModelJudge(j plug.Judge, classes ...string) Option {
	return option(func(g *core.Config) error {
		if j == nil {
			return fmt.Errorf("%w: nil model judge", stepup.ErrConfig)
		}
		if len(classes) == 0 {
			classes = []string{card.ClassExternal}
		}
		m := map[string]bool{}
		for _, c := range classes {
			switch c {
			case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
				m[c] = true
			default:
				return fmt.Errorf("%w: a model judge for unknown effect class %q", stepup.ErrConfig, c)
			}
		}
		g.Judging = &core.JudgeConfig{Judge: j, Classes: m}
		return nil
	})
}

// MaxDwell bounds [WithDwell].
const MaxDwell = 10 * time.Minute

// WithDwell sets the least time between a ticket's card being first shown
// to an approver (the desk's Show) and an approval of it, for the effect
// classes named (every class when none is named); zero removes it. The
// default is [DefaultDwell] for external and irreversible calls. The gate
// enforces it, not the page: the first showing is stored with the ticket
// (by the store's clock, shared by replicas), an approval sooner than the
// dwell is refused with [stepup.ErrTooFast] and changes nothing (the
// approver reads the card and approves again), and an approval of a card
// never shown is refused too. Denials are never held back, and a model
// approver ([WithModelJudge]) has no dwell.
//
// An answer refused as too soon never counts later, in any spelling, so
// that nobody who saw it go by can post it again once the dwell is over.
// The approver signs again, and most passkeys (ECDSA, the usual kind)
// give a new answer each time. A passkey that signs the same challenge to
// the same bytes (Ed25519, or RSA PKCS #1 v1.5, without a signature
// counter) gives the refused answer again, so it can no longer approve
// that ticket: another approver must, or the call is proposed again (a
// new ticket, a new challenge). The refusal says so; approval pages hold
// their button for the dwell ([Desk.ShowFor]) so that it does not happen.
func WithDwell(d time.Duration, classes ...string) Option {
	return option(func(g *core.Config) error {
		if d < 0 || d > MaxDwell {
			return fmt.Errorf("%w: dwell must be from 0 to %v", stepup.ErrConfig, MaxDwell)
		}
		if len(classes) == 0 {
			classes = []string{card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible}
		}
		for _, c := range classes {
			switch c {
			case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
				g.Dwell[c] = d
			default:
				return fmt.Errorf("%w: dwell for unknown effect class %q", stepup.ErrConfig, c)
			}
		}
		return nil
	})
}
