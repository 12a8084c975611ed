package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// points is what a ManualReader collected: each instrument's value per
// attribute set, the set written "k=v,k=v" in key order. A histogram's
// value is its count; its sum is under name+".sum".
type points map[string]map[string]float64

func collect(t *testing.T, r *sdkmetric.ManualReader) points {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	got := points{}
	put := func(name string, set attribute.Set, v float64) {
		if got[name] == nil {
			got[name] = map[string]float64{}
		}
		got[name][set.Encoded(attribute.DefaultEncoder())] += v
	}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, gate.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					put(m.Name, p.Attributes, float64(p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					put(m.Name, p.Attributes, float64(p.Count))
					put(m.Name+".sum", p.Attributes, p.Sum)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

// metered returns options reporting to a fresh ManualReader, and the reader.
func metered() (*sdkmetric.ManualReader, gate.Option) {
	r := sdkmetric.NewManualReader()
	return r, gate.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)))
}

func TestMetricsOfAScriptedCycle(t *testing.T) {
	r, opt := metered()
	w := newWorld(t, opt)
	ctx := context.Background()
	propose := func(c stepup.Call) stepup.Ticket {
		t.Helper()
		tk, err := w.Gate.Propose(ctx, c)
		require.NoError(t, err)
		return tk
	}
	call := func(tool, args, step string) stepup.Call {
		c := sendEmail("finance@example.com")
		c.Tool, c.Args, c.Step = tool, json.RawMessage(args), step
		return c
	}

	// Answered at once: allowed (and run), denied as unknown, denied by a limit.
	read := propose(call("read_file", `{"path":"q3.csv"}`, "r"))
	require.Equal(t, stepup.StatusAllowed, read.Status)
	_, err := w.Gate.Execute(ctx, read.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, propose(call("run_shell", `{"cmd":"id"}`, "x")).Status)
	require.Equal(t, stepup.StatusDenied, propose(call("issue_refund", `{"order":"A-17","amount":900}`, "f")).Status)

	// Approved after 30 s, run, replayed.
	a := propose(call("send_email", `{"to":"finance@example.com"}`, "a"))
	require.Equal(t, stepup.StatusPending, a.Status)
	assert.Equal(t, 1.0, collect(t, r)["asu.gate.pending"]["asu.effect_class=external"], "one ticket waits")
	w.Clock.Advance(30 * time.Second)
	_, err = w.Approve(a.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, a.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, a.ID)
	require.ErrorIs(t, err, stepup.ErrConsumed)

	// Denied after 10 s.
	b := propose(call("send_email", `{"to":"finance@example.com"}`, "b"))
	w.Clock.Advance(10 * time.Second)
	_, err = w.Deny(b.ID, "not today")
	require.NoError(t, err)

	// Merged with an identical pending request, then withdrawn after 2 s.
	c := propose(call("send_email", `{"to":"finance@example.com"}`, "c"))
	require.Equal(t, c.ID, propose(call("send_email", `{"to":"finance@example.com"}`, "c")).ID)
	w.Clock.Advance(2 * time.Second)
	_, err = w.Gate.Cancel(ctx, c.ID, "changed my mind")
	require.NoError(t, err)

	// Nobody decides in time: timed out after 15 min, the safe
	// alternative (write_draft) is allowed in its place.
	propose(call("send_email", `{"to":"finance@example.com"}`, "d"))
	w.Clock.Advance(15 * time.Minute)
	n, err := w.Gate.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	got := collect(t, r)
	assert.Equal(t, map[string]float64{
		"asu.decision=allow,asu.effect_class=read":              1,
		"asu.decision=allow,asu.effect_class=reversible":        1,
		"asu.decision=deny,asu.effect_class=none":               1,
		"asu.decision=deny,asu.effect_class=irreversible":       1,
		"asu.decision=needs_approval,asu.effect_class=external": 4,
		"asu.decision=merged,asu.effect_class=external":         1,
		"asu.decision=approved,asu.effect_class=external":       1,
		"asu.decision=denied,asu.effect_class=external":         1,
		"asu.decision=cancelled,asu.effect_class=external":      1,
		"asu.decision=expired,asu.effect_class=external":        1,
	}, got["asu.gate.decisions"])
	assert.Equal(t, map[string]float64{"asu.effect_class=external": 0}, got["asu.gate.pending"],
		"every parked ticket was resolved")
	assert.Equal(t, map[string]float64{
		"asu.decision=approved,asu.effect_class=external":  1,
		"asu.decision=denied,asu.effect_class=external":    1,
		"asu.decision=cancelled,asu.effect_class=external": 1,
		"asu.decision=expired,asu.effect_class=external":   1,
	}, got["asu.gate.decision.duration"])
	assert.Equal(t, map[string]float64{
		"asu.decision=approved,asu.effect_class=external":  30,
		"asu.decision=denied,asu.effect_class=external":    10,
		"asu.decision=cancelled,asu.effect_class=external": 2,
		"asu.decision=expired,asu.effect_class=external":   15 * 60,
	}, got["asu.gate.decision.duration.sum"], "seconds from park to decision, by the store's clock")
	assert.Equal(t, map[string]float64{
		"asu.effect_class=read,asu.execution.outcome=executed":     1,
		"asu.effect_class=external,asu.execution.outcome=executed": 1,
		"asu.effect_class=external,asu.execution.outcome=refused":  1,
	}, got["asu.gate.executions"])
	assert.Empty(t, got["asu.gate.flood.refusals"])
	assert.Empty(t, got["asu.gate.lease.reclaims"])
}

func TestMetricsOfFloodRefusals(t *testing.T) {
	off := flood.Rate{N: -1}
	noLock := flood.Lockout{After: -1}
	tests := []struct {
		name   string
		limits flood.Limits
		deny   int // how many parked tickets approvers deny first
		want   map[string]float64
		locks  map[string]float64
	}{
		{"session rate", flood.Limits{Session: flood.Rate{N: 2, Per: time.Hour}, Agent: off, User: off, ApproverInflow: off,
			SessionLockout: noLock, AgentLockout: noLock, UserLockout: noLock, PendingPerSession: -1, PendingPerUser: -1},
			0, map[string]float64{"asu.flood.limit=rate,asu.flood.scope=session": 3}, nil},
		{"agent rate", flood.Limits{Session: off, Agent: flood.Rate{N: 3, Per: time.Hour}, User: off, ApproverInflow: off,
			SessionLockout: noLock, AgentLockout: noLock, UserLockout: noLock, PendingPerSession: -1, PendingPerUser: -1},
			0, map[string]float64{"asu.flood.limit=rate,asu.flood.scope=agent": 2}, nil},
		{"user rate", flood.Limits{Session: off, Agent: off, User: flood.Rate{N: 1, Per: time.Hour}, ApproverInflow: off,
			SessionLockout: noLock, AgentLockout: noLock, UserLockout: noLock, PendingPerSession: -1, PendingPerUser: -1},
			0, map[string]float64{"asu.flood.limit=rate,asu.flood.scope=user": 4}, nil},
		{"approver inflow", flood.Limits{Session: off, Agent: off, User: off, ApproverInflow: flood.Rate{N: 4, Per: time.Hour},
			SessionLockout: noLock, AgentLockout: noLock, UserLockout: noLock, PendingPerSession: -1, PendingPerUser: -1},
			0, map[string]float64{"asu.flood.limit=rate,asu.flood.scope=approver": 1}, nil},
		{"pending cap", flood.Limits{Session: off, Agent: off, User: off, ApproverInflow: off,
			SessionLockout: noLock, AgentLockout: noLock, UserLockout: noLock, PendingPerSession: 3, PendingPerUser: -1},
			0, map[string]float64{"asu.flood.limit=pending_cap,asu.flood.scope=unknown": 2}, nil},
		{"flood control cannot decide", flood.Limits{}, -1,
			map[string]float64{"asu.flood.limit=unavailable,asu.flood.scope=unknown": 5}, nil},
		{"session lockout", flood.Limits{Session: off, Agent: off, User: off, ApproverInflow: off,
			SessionLockout: flood.Lockout{After: 2, For: time.Hour}, AgentLockout: noLock, UserLockout: noLock,
			PendingPerSession: -1, PendingPerUser: -1},
			2, map[string]float64{"asu.flood.limit=lockout,asu.flood.scope=session": 3},
			map[string]float64{"asu.flood.scope=session": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, opt := metered()
			clock := stepuptest.NewClock(stepuptest.Start())
			st := stepuptest.Memory(clock)
			var f gate.Flood = limiter(t, st, clock, tt.limits)
			if tt.deny < 0 {
				f = unavailableFlood{}
			}
			h := stepuptest.NewGate(t, nil, opt, gate.WithFlood(f))
			// The limiter counts in its own store; the gate parks in h's.
			ctx := context.Background()
			var parked []stepup.TicketID
			for i := range 5 {
				if i == tt.deny && tt.deny > 0 {
					for _, id := range parked {
						_, err := h.Deny(id, "")
						require.NoError(t, err)
					}
				}
				tk, err := h.Gate.Propose(ctx, floodCall("sess-flood", "user:dana", i))
				require.NoError(t, err)
				if tk.Status == stepup.StatusPending {
					parked = append(parked, tk.ID)
				}
			}
			got := collect(t, r)
			assert.Equal(t, tt.want, got["asu.gate.flood.refusals"])
			assert.Equal(t, tt.locks, got["asu.gate.flood.lockouts"])
			var refused float64
			for _, v := range tt.want {
				refused += v
			}
			assert.Equal(t, refused, got["asu.gate.decisions"]["asu.decision=deny,asu.effect_class=external"],
				"each refusal is a decision too")
		})
	}
}

// unavailableFlood cannot decide any admission.
type unavailableFlood struct{}

func (unavailableFlood) Admit(context.Context, flood.Request) error { return flood.ErrUnavailable }
func (unavailableFlood) Decided(context.Context, flood.Request, bool) error {
	return nil
}
func (unavailableFlood) Caps() store.Caps { return store.Caps{} }

func TestMetricsOfReclaimsAndOutcomes(t *testing.T) {
	r, opt := metered()
	h := stepuptest.NewGate(t, nil)
	ctx := context.Background()
	key := []byte("the key both gates of one store share!")
	first := &dying{Store: h.Store}
	crash := &crashOnce{kill: first.kill}
	g1, err := gate.New(first, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store),
		gate.WithExecutor("write_draft", crash), gate.WithKey(key))
	require.NoError(t, err)
	failing := plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
		return nil, errors.New("mailbox full")
	})
	g2, err := gate.New(h.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store), opt,
		gate.WithExecutor("write_draft", crash), gate.WithExecutor("search_tickets", failing), gate.WithKey(key),
		gate.WithLocalClock(h.Clock.Now))
	require.NoError(t, err)

	// Two executions die with their gate: one is re-run; the other's tool
	// has no executor on the gate that recovers, which leaves it to a gate
	// that can run it.
	draft, err := g1.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = g1.Execute(ctx, draft.ID)
	assert.ErrorIs(t, err, stepup.ErrOutcomeUnknown, "the executor's gate died")
	zeroth := &dying{Store: h.Store}
	g0, err := gate.New(zeroth, stepuptest.SeedCatalog(), stepuptest.Passkeys(h.Store),
		gate.WithExecutor("read_file", plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			zeroth.kill()
			panic("process killed")
		})), gate.WithKey(key))
	require.NoError(t, err)
	rd, err := g0.Propose(ctx, stepup.Call{Tool: "read_file", Args: []byte(`{"path":"q3.csv"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = g0.Execute(ctx, rd.ID)
	assert.ErrorIs(t, err, stepup.ErrOutcomeUnknown, "the executor's gate died")
	h.Clock.Advance(gate.DefaultLease)
	watchExpired(t, h.Clock, gate.DefaultLease, g2)
	_, err = g2.Recover(ctx)
	require.NoError(t, err)
	left, err := g2.Ticket(ctx, rd.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusExecuting, left.Status, "not abandoned by a gate that cannot run it")

	// And one runs and fails.
	search, err := g2.Propose(ctx, stepup.Call{Tool: "search_tickets", Args: []byte(`{}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = g2.Execute(ctx, search.ID)
	require.ErrorIs(t, err, stepup.ErrExecutorFailed)

	got := collect(t, r)
	assert.Equal(t, map[string]float64{"asu.effect_class=reversible": 1}, got["asu.gate.lease.reclaims"])
	assert.Equal(t, map[string]float64{
		"asu.effect_class=reversible,asu.execution.outcome=executed": 1,
		"asu.effect_class=read,asu.execution.outcome=failed":         1,
	}, got["asu.gate.executions"])
}

// lostFinish loses the answer of the first Finish: the outcome is
// recorded nowhere, as when the store goes away after the tool ran.
type lostFinish struct {
	*memory.Store
	lost atomic.Bool
}

func (l *lostFinish) Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error) {
	if l.lost.CompareAndSwap(false, true) {
		return store.Approval{}, errors.New("connection reset")
	}
	return l.Store.Finish(ctx, id, fence, o, note)
}

func TestMetricsOfAnUnknownOutcome(t *testing.T) {
	r, opt := metered()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := &lostFinish{Store: stepuptest.Memory(clock)}
	exec := &recorder{}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), opt, gate.WithExecutor("write_draft", exec),
		gate.WithLocalClock(clock.Now))
	require.NoError(t, err)
	ctx := context.Background()
	tk, err := g.Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = g.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrOutcomeUnknown)
	assert.Equal(t, map[string]float64{"asu.effect_class=reversible,asu.execution.outcome=unknown": 1},
		collect(t, r)["asu.gate.executions"])

	clock.Advance(gate.DefaultLease)
	watchExpired(t, clock, gate.DefaultLease, g)
	_, err = g.Recover(ctx)
	require.NoError(t, err)
	got := collect(t, r)
	assert.Equal(t, map[string]float64{
		"asu.effect_class=reversible,asu.execution.outcome=unknown":  1,
		"asu.effect_class=reversible,asu.execution.outcome=executed": 1,
	}, got["asu.gate.executions"], "recovery settles it")
	assert.Equal(t, map[string]float64{"asu.effect_class=reversible": 1}, got["asu.gate.lease.reclaims"])
	assert.Equal(t, 2, exec.Count(), "run again with the same key")
}

func TestObservabilityOptionsRefuseNil(t *testing.T) {
	for name, opt := range map[string]gate.Option{
		"logger":         gate.WithLogger(nil),
		"meter provider": gate.WithMeterProvider(nil),
		"failing meter":  gate.WithMeterProvider(failingProvider{}),
	} {
		t.Run(name, func(t *testing.T) {
			st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
			_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), opt)
			assert.ErrorIs(t, err, stepup.ErrConfig)
		})
	}
}

// failingProvider's meter refuses to make a histogram.
type failingProvider struct{ noop.MeterProvider }

func (failingProvider) Meter(string, ...metric.MeterOption) metric.Meter { return failingMeter{} }

type failingMeter struct{ noop.Meter }

func (failingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return nil, errors.New("no histograms here")
}

func TestObservedGateSharesNoStateBetweenGoroutines(t *testing.T) {
	r, opt := metered()
	w := newWorld(t, opt, gate.WithLogger(slog.New(slog.NewTextHandler(&lockedBuffer{}, nil))))
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := stepup.Call{Tool: "read_file", Args: []byte(`{"path":"q3.csv"}`), Session: "s",
				Step: fmt.Sprint(i), Principal: agentFor("user:dana")}
			tk, err := w.Gate.Propose(ctx, c)
			if assert.NoError(t, err) {
				_, err = w.Gate.Execute(ctx, tk.ID)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	got := collect(t, r)
	assert.Equal(t, 8.0, got["asu.gate.decisions"]["asu.decision=allow,asu.effect_class=read"])
	assert.Equal(t, 8.0, got["asu.gate.executions"]["asu.effect_class=read,asu.execution.outcome=executed"])
}

// TestGateLinksOnlyTheMetricAPI: the gate links the OpenTelemetry metric
// API (with its no-op), never an SDK or an exporter; those are the
// integrator's choice.
func TestGateLinksOnlyTheMetricAPI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	assert.Contains(t, deps, "go.opentelemetry.io/otel/metric")
	for _, dep := range deps {
		for _, forbidden := range []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "prometheus"} {
			assert.NotContains(t, dep, forbidden)
		}
	}
}
