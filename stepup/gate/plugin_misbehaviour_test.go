package gate_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// misbehaviour is one way a plug-in misbehaves. act runs at the start of
// the plug-in's call: it panics, exits, fails, or waits; when it returns
// nil the plug-in then gives its most dangerous answer (allow, approve,
// admit, a verified answer, a successful run), which must not be used.
type misbehaviour struct {
	name string
	act  func(ctx context.Context, release <-chan struct{}) error
}

// misbehaviours is the generator: panics of every kind of value, an
// exit, an error, a hang until the context ends, a hang past it, an
// answer just after it ended, and an approving answer long after.
func misbehaviours() []misbehaviour {
	return []misbehaviour{
		{"panic with a string", func(context.Context, <-chan struct{}) error { panic("boom") }},
		{"panic with nil", func(context.Context, <-chan struct{}) error { panic(nil) }},
		{"panic with an error", func(context.Context, <-chan struct{}) error { panic(errors.New("boom")) }},
		{"panic with a runtime error", func(context.Context, <-chan struct{}) error {
			var m map[string]int
			//lint:ignore SA5000 the runtime error is the misbehaviour under test
			m["x"] = 1
			return nil
		}},
		{"panic with an index out of range", func(context.Context, <-chan struct{}) error {
			s := []int{}
			_ = s[len(s)+1-1]
			return nil
		}},
		{"goexit", func(context.Context, <-chan struct{}) error { runtime.Goexit(); return nil }},
		{"error", func(context.Context, <-chan struct{}) error { return errors.New("plug-in failed") }},
		{"hang until the context ends", func(ctx context.Context, _ <-chan struct{}) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		{"answer just after the context ended", func(ctx context.Context, _ <-chan struct{}) error {
			<-ctx.Done()
			return nil
		}},
		{"ignore the context, approve long after", func(_ context.Context, release <-chan struct{}) error {
			<-release
			return nil
		}},
	}
}

// site is one plug-in of a gate, misbehaving as m; run drives the gate
// through the call, under ctx, and checks that nothing was decided by
// the plug-in and that the refusal is audited with a reason.
type site struct {
	name string
	run  func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{})
}

// quick is the gate's deadline for a plug-in call whose caller gave none.
// It bounds the healthy plug-ins of the same gate too, so it is long
// enough for them on a loaded machine.
const quick = 250 * time.Millisecond

func sites() []site {
	return []site{
		{"policy", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			p := policyFunc(func(ctx context.Context, _ plug.Proposal) (plug.Decision, error) {
				if err := m.act(ctx, release); err != nil {
					return plug.Decision{}, err
				}
				return plug.Decision{Verdict: plug.Allow, Reason: "allowed", PolicyVersion: "v1", Class: card.ClassRead}, nil
			})
			h := stepuptest.NewGate(t, p, gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			denied(t, h, tk, "policy")
		}},
		{"renderer", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			// A renderer takes no context: the gate's deadline for it is
			// quick; the one it keeps to is four times that, so whatever
			// it answers comes late.
			r := rendererFunc(func(e canon.Sealed, c card.Context) (*card.Card, error) {
				rctx, cancel := context.WithTimeout(context.Background(), 4*quick)
				defer cancel()
				if err := m.act(rctx, release); err != nil {
					return nil, err
				}
				return card.RenderSealed(e, c)
			})
			h := stepuptest.NewGate(t, nil, gate.WithRenderer(r), gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
			require.NoError(t, err)
			denied(t, h, tk, "")
		}},
		{"grants", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			// The grant the call names covers it: a grant check that
			// answered in time would let it run without asking.
			gr := grantsFunc(func(ctx context.Context, id string, _ canon.Sealed) (string, error) {
				if err := m.act(ctx, release); err != nil {
					return "", err
				}
				return id, nil
			})
			w := newGrantWorld(t, refundTemplate(), 5, gate.WithCoverage(gr), gate.WithPluginTimeout(quick))
			c := refund(`{"order":"A-17","amount":10}`)
			c.Grant = w.grant
			tk, err := w.Gate.Propose(ctx, c)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, tk.Status, "a misbehaving grant check decided: %s", tk.Reason)
			rows := rowsOfTicket(t, w.Harness, tk.ID)
			require.NotEmpty(t, rows)
			assert.Contains(t, rows[len(rows)-1].Reason, "grant not used")
		}},
		{"flood", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			f := &floodDouble{admit: func(ctx context.Context) error { return m.act(ctx, release) }}
			h := stepuptest.NewGate(t, nil, gate.WithFlood(f), gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			denied(t, h, tk, "")
		}},
		{"judge", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			j := judgeFunc(func(ctx context.Context, _, _ string) plug.Judgment {
				if err := m.act(ctx, release); err != nil {
					return plug.Judgment{ModelID: "m", Err: err}
				}
				return plug.Judgment{Approve: true, ModelID: "m", Reason: "looks fine"}
			})
			h := stepuptest.NewGate(t, nil, gate.WithModelJudge(j, card.ClassExternal), gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			assert.NotEqual(t, stepup.StatusApproved, tk.Status, "a misbehaving judge approved")
			assert.Equal(t, stepup.StatusDenied, tk.Status)
			rows := rowsOfTicket(t, h, tk.ID)
			require.NotEmpty(t, rows)
			last := rows[len(rows)-1]
			assert.Equal(t, audit.DecisionDenied, last.Decision)
			assert.NotEmpty(t, last.Reason)
		}},
		{"approver verify", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			a := &approverDouble{sayAs: sayAs{stepuptest.Approver}, verify: func(ctx context.Context) error { return m.act(ctx, release) }}
			h := stepuptest.NewGateWith(t, nil, a, gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`{}`))
			require.Error(t, err)
			if m.name != "error" {
				assert.ErrorIs(t, err, plug.ErrMisbehaved)
			}
			got, err := h.Gate.Ticket(context.Background(), tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status, "a misbehaving approver decided")
			if m.name != "error" { // an approver's own refusal is its word, not a misbehaviour
				rows := rowsOfTicket(t, h, tk.ID)
				last := rows[len(rows)-1]
				assert.Equal(t, audit.DecisionRefused, last.Decision)
				assert.Contains(t, last.Reason, "approver")
			}
		}},
		{"approver recheck", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			a := &approverDouble{sayAs: sayAs{stepuptest.Approver}, recheck: func(ctx context.Context) error { return m.act(ctx, release) }}
			rec := &recorder{}
			h := stepuptest.NewGateWith(t, nil, a, gate.WithPluginTimeout(quick), gate.WithExecutor("send_email", rec))
			bg := context.Background()
			tk, err := h.Gate.Propose(bg, sendEmail("finance@example.com"))
			require.NoError(t, err)
			_, err = h.Gate.Desk().Approve(bg, tk.ID, []byte(`{}`))
			require.NoError(t, err)
			_, err = h.Gate.Execute(ctx, tk.ID)
			require.Error(t, err)
			assert.Zero(t, rec.Count(), "ran on evidence a misbehaving approver vouched for")
			got, err := h.Gate.Ticket(bg, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status, "nothing spent")
			rows := rowsOfTicket(t, h, tk.ID)
			last := rows[len(rows)-1]
			assert.Equal(t, audit.DecisionNotRun, last.Decision)
			assert.NotEmpty(t, last.Reason)
		}},
		{"executor", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			e := plug.ExecutorFunc(func(ctx context.Context, _ canon.Effect, _ string) ([]byte, error) {
				if err := m.act(ctx, release); err != nil {
					return nil, err
				}
				return []byte(`{"ok":true}`), nil
			})
			h := stepuptest.NewGate(t, nil, gate.WithExecutor("write_draft", e), gate.WithPluginTimeout(quick))
			bg := context.Background()
			tk, err := h.Gate.Propose(bg, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
				Session: "s", Principal: agentFor("user:dana")})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusAllowed, tk.Status)
			_, err = h.Gate.Execute(ctx, tk.ID)
			require.ErrorIs(t, err, stepup.ErrExecutorFailed)
			got, err := h.Gate.Ticket(bg, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusFailed, got.Status, "a misbehaving executor's run is a failed run")
			rows := rowsOfTicket(t, h, tk.ID)
			last := rows[len(rows)-1]
			assert.Equal(t, audit.DecisionFailed, last.Decision)
			assert.NotEmpty(t, last.Reason)
		}},
		{"notifier", func(t *testing.T, ctx context.Context, m misbehaviour, release <-chan struct{}) {
			n := notifierFunc(func(ctx context.Context, _ notify.Notice) error { return m.act(ctx, release) })
			h := stepuptest.NewGate(t, nil, gate.WithNotifier(n, func(id stepup.TicketID) string { return "https://approve/" + string(id) }),
				gate.WithPluginTimeout(quick))
			tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, tk.Status, "a notifier changed the decision")
		}},
	}
}

// TestMisbehavingPluginsDecideNothing runs every misbehaviour of the
// generator against every plug-in: no decision is the plug-in's, each
// refusal has its audit row with a reason, nothing panics out of the
// gate, and once the plug-ins that ignored their context return, no
// goroutine is left behind.
func TestMisbehavingPluginsDecideNothing(t *testing.T) {
	for _, s := range sites() {
		for _, m := range misbehaviours() {
			t.Run(s.name+"/"+m.name, func(t *testing.T) {
				base := runtime.NumGoroutine()
				release := make(chan struct{})
				func() {
					defer close(release)
					// The caller gives no deadline: the gate's own
					// (WithPluginTimeout) bounds each plug-in call.
					s.run(t, context.Background(), m, release)
				}()
				settled(t, base)
			})
		}
	}
}

// settled waits for the goroutines of a subtest to end: at most base
// remain.
func settled(t *testing.T, base int) {
	t.Helper()
	for range 500 {
		if runtime.NumGoroutine() <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("goroutines left behind: %d, was %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
}

// TestLateJudgeApprovesOnANaiveGate: a judge that answers "approve" after
// its context ended, asked as a gate without containment asks it, has
// its late approval in hand: the generator above bites.
func TestLateJudgeApprovesOnANaiveGate(t *testing.T) {
	late := judgeFunc(func(ctx context.Context, _, _ string) plug.Judgment {
		<-ctx.Done()
		return plug.Judgment{Approve: true, ModelID: "m"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), quick)
	defer cancel()
	v := late.Decide(ctx, "card", "") // the naive gate's call
	assert.Error(t, ctx.Err(), "the caller's deadline passed")
	assert.True(t, v.Approve, "and the naive gate holds an approval to apply")

	h := stepuptest.NewGate(t, nil, gate.WithModelJudge(late, card.ClassExternal))
	ctx2, cancel2 := context.WithTimeout(context.Background(), quick)
	defer cancel2()
	tk, err := h.Gate.Propose(ctx2, sendEmail("finance@example.com"))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status, "the gate discards it")
}

// denied checks that tk was refused at propose, with an audit row whose
// reason names the plug-in when mention is set.
func denied(t *testing.T, h *stepuptest.Harness, tk stepup.Ticket, mention string) {
	t.Helper()
	assert.Equal(t, stepup.StatusDenied, tk.Status, "a misbehaving plug-in decided: %s", tk.Reason)
	assert.NotEmpty(t, tk.Reason)
	rows := rowsOfTicket(t, h, tk.ID)
	require.Len(t, rows, 1)
	assert.Equal(t, audit.DecisionDeny, rows[0].Decision)
	assert.NotEmpty(t, rows[0].Reason)
	if mention != "" {
		assert.Contains(t, rows[0].Reason, mention)
	}
	page, _, err := h.Store.List(context.Background(), store.Filter{})
	require.NoError(t, err)
	assert.Empty(t, page, "nothing stored")
}

func rowsOfTicket(t *testing.T, h *stepuptest.Harness, id stepup.TicketID) []audit.Record {
	t.Helper()
	rows, err := h.Store.AuditRange(context.Background(), time.Time{}, stepupFar)
	require.NoError(t, err)
	var out []audit.Record
	for _, r := range rows {
		if r.TicketID == string(id) {
			out = append(out, r)
		}
	}
	return out
}

type policyFunc func(ctx context.Context, p plug.Proposal) (plug.Decision, error)

func (f policyFunc) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return f(ctx, p)
}

type notifierFunc func(ctx context.Context, n notify.Notice) error

func (f notifierFunc) Notify(ctx context.Context, n notify.Notice) error { return f(ctx, n) }

type grantsFunc func(ctx context.Context, id string, s canon.Sealed) (string, error)

func (f grantsFunc) Target(ctx context.Context, id string, s canon.Sealed) (string, error) {
	return f(ctx, id, s)
}

type rendererFunc func(e canon.Sealed, c card.Context) (*card.Card, error)

func (f rendererFunc) RenderSealed(e canon.Sealed, c card.Context) (*card.Card, error) {
	return f(e, c)
}

type judgeFunc func(ctx context.Context, card, untrusted string) plug.Judgment

func (f judgeFunc) Decide(ctx context.Context, card, untrusted string) plug.Judgment {
	return f(ctx, card, untrusted)
}

// floodDouble admits as admit says, and counts nothing.
type floodDouble struct {
	admit func(ctx context.Context) error
}

func (f *floodDouble) Admit(ctx context.Context, _ flood.Request) error   { return f.admit(ctx) }
func (f *floodDouble) Decided(context.Context, flood.Request, bool) error { return nil }
func (f *floodDouble) Caps() store.Caps                                   { return store.Caps{} }

// approverDouble answers as sayAs does, first acting out verify and
// recheck when they are set.
type approverDouble struct {
	sayAs
	verify, recheck func(ctx context.Context) error
}

func (a *approverDouble) Verify(ctx context.Context, req plug.Request, answer []byte) (plug.Verified, error) {
	if a.verify != nil {
		if err := a.verify(ctx); err != nil {
			return plug.Verified{}, err
		}
	}
	return a.sayAs.Verify(ctx, req, answer)
}

func (a *approverDouble) Recheck(ctx context.Context, ans plug.Answer) error {
	if a.recheck != nil {
		if err := a.recheck(ctx); err != nil {
			return err
		}
	}
	return a.sayAs.Recheck(ctx, ans)
}

// TestStragglersMetric: a plug-in call given up on at its deadline counts
// in asu.gate.plugins.stragglers until the plug-in returns.
func TestStragglersMetric(t *testing.T) {
	r, opt := metered()
	release := make(chan struct{})
	p := policyFunc(func(context.Context, plug.Proposal) (plug.Decision, error) {
		<-release
		return plug.Decision{Verdict: plug.Allow, PolicyVersion: "v1"}, nil
	})
	h := stepuptest.NewGate(t, p, opt, gate.WithPluginTimeout(quick))
	base := runtime.NumGoroutine()
	tk, err := h.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Equal(t, int64(1), h.Gate.Stragglers())
	assert.Equal(t, 1.0, collect(t, r)["asu.gate.plugins.stragglers"][""])
	close(release)
	require.Eventually(t, func() bool { return h.Gate.Stragglers() == 0 }, 10*time.Second, time.Millisecond,
		"the straggler returned")
	assert.Zero(t, collect(t, r)["asu.gate.plugins.stragglers"][""])
	settled(t, base)
}

// TestMisbehavingApproverRowsAreBounded: answers anyone may post, to an
// approver that panics on each, leave one row per ticket and
// misbehaviour, not one per answer.
func TestMisbehavingApproverRowsAreBounded(t *testing.T) {
	a := &approverDouble{sayAs: sayAs{stepuptest.Approver}, verify: func(context.Context) error { panic("boom") }}
	h := stepuptest.NewGateWith(t, nil, a)
	ctx := context.Background()
	tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	before := len(rowsOfTicket(t, h, tk.ID))
	for i := range 50 {
		_, err := h.Gate.Desk().Approve(ctx, tk.ID, []byte(fmt.Sprintf(`{"n":%d}`, i)))
		require.ErrorIs(t, err, plug.ErrMisbehaved)
	}
	rows := rowsOfTicket(t, h, tk.ID)
	require.Len(t, rows, before+1)
	assert.Equal(t, "approve answer refused: approver panicked or exited", rows[len(rows)-1].Reason)
}
