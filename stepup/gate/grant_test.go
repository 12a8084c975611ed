package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// refundCatalog has an irreversible refund tool with a per-call ceiling
// of 5000, so a refund of 1200 needs approval rather than a denial.
func refundCatalog(t *testing.T, approvers string) *policy.Catalog {
	t.Helper()
	c, err := policy.NewCatalog("refunds-1",
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Schema:    json.RawMessage(`{"type":"object","required":["order","amount"]}`),
			Limits:    []policy.Limit{policy.MaxAmount("amount", "5000")},
			Approvers: approvers, Audience: "payments"})
	require.NoError(t, err)
	return c
}

func refund(args string) stepup.Call {
	return stepup.Call{Tool: "issue_refund", Args: json.RawMessage(args), Task: "t-9", Step: "s-1",
		Session: "sess-support", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:support"}}
}

// refundTemplate is Dana's grant: refunds of order A-17 up to 120.
func refundTemplate() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}}
}

// grantWorld is a gate with the refund catalog whose approver issued a
// grant through the desk with her passkey.
type grantWorld struct {
	*stepuptest.Harness
	exec  *recorder
	grant string
}

func newGrantWorld(t *testing.T, g grant.Grant, uses int, opts ...gate.Option) *grantWorld {
	t.Helper()
	w := &grantWorld{exec: &recorder{}}
	w.Harness = stepuptest.NewGate(t, refundCatalog(t, ""), append([]gate.Option{
		gate.WithExecutor("issue_refund", w.exec)}, opts...)...)
	w.grant = w.issue(t, g, uses)
	return w
}

// issue asks the approver for a grant and approves it with her passkey.
func (w *grantWorld) issue(t *testing.T, g grant.Grant, uses int) string {
	t.Helper()
	ctx := context.Background()
	tk, err := w.Gate.Desk().Grant(ctx, stepuptest.Approver, gate.GrantSpec{Grant: g, Uses: uses,
		ExpiresAt: w.Clock.Now().Add(8 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	require.Equal(t, plug.GrantTool, tk.Tool)
	done, err := w.Approve(tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuted, done.Status)
	return string(tk.ID)
}

// propose proposes c naming the grant and returns the ticket and the
// reason of its last audit row.
func (w *grantWorld) propose(t *testing.T, c stepup.Call) (stepup.Ticket, audit.Record) {
	t.Helper()
	ctx := context.Background()
	c.Grant = w.grant
	tk, err := w.Gate.Propose(ctx, c)
	requireRefusal(t, err)
	rows, err := w.Store.AuditByTask(ctx, c.Task)
	require.NoError(t, err)
	return tk, rows[len(rows)-1]
}

func TestGrantCoverageThroughTheGate(t *testing.T) {
	tests := []struct {
		name       string
		args       string
		wantStatus stepup.Status
		wantAudit  string
	}{
		{"covered: 120 to A-17", `{"order":"A-17","amount":120}`, stepup.StatusApproved, "covered by grant "},
		{"covered: 35.50 to A-17", `{"order":"A-17","amount":35.50}`, stepup.StatusApproved, "covered by grant "},
		{"1200 is over the grant", `{"order":"A-17","amount":1200}`, stepup.StatusPending,
			`irreversible effect; grant not used: effect not covered: argument outside the grant bounds at "/amount"`},
		{"120.0000001 is over the grant", `{"order":"A-17","amount":120.0000001}`, stepup.StatusPending,
			`grant not used: effect not covered: argument outside the grant bounds at "/amount"`},
		{"another order", `{"order":"A-18","amount":10}`, stepup.StatusPending,
			`grant not used: effect not covered: argument differs from the grant at "/order"`},
		{"an extra argument", `{"order":"A-17","amount":10,"to_account":"X-9"}`, stepup.StatusPending,
			`grant not used: effect not covered: argument not pinned at "/to_account"`},
		{"over the policy's ceiling: still denied", `{"order":"A-17","amount":6000}`, stepup.StatusDenied,
			"over the per-call limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newGrantWorld(t, refundTemplate(), 5)
			tk, row := w.propose(t, refund(tt.args))
			assert.Equal(t, tt.wantStatus, tk.Status)
			assert.Contains(t, row.Reason, tt.wantAudit)
			if tt.wantStatus != stepup.StatusApproved {
				assert.NotEqual(t, "grant:"+w.grant, row.Approver)
				return
			}
			assert.Equal(t, audit.DecisionAllow, row.Decision)
			assert.Equal(t, "grant:"+w.grant, row.Approver)
			_, err := w.Gate.Execute(context.Background(), tk.ID)
			require.NoError(t, err)
			require.Equal(t, 1, w.exec.Count(), "runs through the same Execute path")
			assert.JSONEq(t, tt.args, string(w.exec.Runs()[0].Args))
			_, err = w.Gate.Execute(context.Background(), tk.ID)
			assert.ErrorIs(t, err, stepup.ErrConsumed)
		})
	}
}

// TestGrantNaiveScopeIsTheAttack shows what the template's rules prevent:
// a grant that names only the tool ("refunds are fine") covers the 1200
// refund and the extra argument.
func TestGrantNaiveScopeIsTheAttack(t *testing.T) {
	naive := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
		Args: []grant.Rule{grant.Text("/order", 64), grant.Range("/amount", "0", ""), grant.Text("/to_account", 64)}}}
	w := newGrantWorld(t, naive, 5)
	tk, _ := w.propose(t, refund(`{"order":"A-17","amount":1200,"to_account":"X-9"}`))
	assert.Equal(t, stepup.StatusApproved, tk.Status, "a loose grant approves what nobody looked at")

	strict := newGrantWorld(t, refundTemplate(), 5)
	tk, _ = strict.propose(t, refund(`{"order":"A-17","amount":1200,"to_account":"X-9"}`))
	assert.Equal(t, stepup.StatusPending, tk.Status)
}

func TestGrantUsedUpFallsBackToAPerson(t *testing.T) {
	w := newGrantWorld(t, refundTemplate(), 2)
	for i, want := range []stepup.Status{stepup.StatusApproved, stepup.StatusApproved, stepup.StatusPending} {
		c := refund(`{"order":"A-17","amount":100}`)
		c.Step = []string{"s-1", "s-2", "s-3"}[i]
		tk, row := w.propose(t, c)
		require.Equal(t, want, tk.Status, "call %d", i)
		if want == stepup.StatusPending {
			assert.Contains(t, row.Reason, "grant not used: no uses left")
			got, err := w.Approve(tk.ID)
			require.NoError(t, err, "a person can still approve it")
			assert.Equal(t, stepup.StatusApproved, got.Status)
		}
	}
}

func TestGrantExpiresAndIsTheUsersOnly(t *testing.T) {
	w := newGrantWorld(t, refundTemplate(), 5)
	other := refund(`{"order":"A-17","amount":10}`)
	other.Principal.User = "user:erin"
	tk, row := w.propose(t, other)
	assert.Equal(t, stepup.StatusPending, tk.Status)
	assert.Contains(t, row.Reason, "grant not used: effect not covered: user differs")

	unknown := refund(`{"order":"A-17","amount":10}`)
	tk, err := w.Gate.Propose(context.Background(), func() stepup.Call { unknown.Grant = "nope"; return unknown }())
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status)

	w.Clock.Advance(8 * time.Hour)
	late := refund(`{"order":"A-17","amount":10}`)
	late.Step = "s-late"
	tk, row = w.propose(t, late)
	assert.Equal(t, stepup.StatusPending, tk.Status)
	assert.Contains(t, row.Reason, "grant not used: expired")
}

func TestGrantPlanStepsRunOnceEach(t *testing.T) {
	var ds []canon.Digest
	calls := []stepup.Call{refund(`{"order":"A-17","amount":120}`), refund(`{"order":"B-02","amount":35.5}`)}
	for _, c := range calls {
		d, err := canon.Effect{Tool: c.Tool, Args: c.Args, Task: c.Task, Step: c.Step, Principal: c.Principal,
			PolicyVersion: "refunds-1", Audience: "payments"}.Digest()
		require.NoError(t, err)
		ds = append(ds, d)
	}
	w := newGrantWorld(t, grant.Plan(ds...), 0)
	for _, c := range calls {
		tk, _ := w.propose(t, c)
		assert.Equal(t, stepup.StatusApproved, tk.Status)
		_, err := w.Gate.Execute(context.Background(), tk.ID)
		require.NoError(t, err)
		again, row := w.propose(t, c)
		assert.Equal(t, stepup.StatusPending, again.Status, "a plan's step runs once")
		assert.Contains(t, row.Reason, "grant not used: no uses left")
	}
}

func TestGrantRespectsApproverGroups(t *testing.T) {
	h := stepuptest.NewGate(t, refundCatalog(t, "finance"), gate.WithApproverGroup("finance", "user:fin"))
	tk, err := h.Gate.Desk().Grant(context.Background(), stepuptest.Approver, gate.GrantSpec{
		Grant: refundTemplate(), Uses: 5, ExpiresAt: h.Clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	_, err = h.Approve(tk.ID)
	require.NoError(t, err)
	c := refund(`{"order":"A-17","amount":10}`)
	c.Grant = string(tk.ID)
	got, err := h.Gate.Propose(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "dana may not approve refunds, so her grant may not either")
}

func TestGrantIssuance(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, refundCatalog(t, ""))
	desk := h.Gate.Desk()
	spec := gate.GrantSpec{Grant: refundTemplate(), Uses: 1, ExpiresAt: h.Clock.Now().Add(time.Hour)}

	t.Run("only the grant's own user approves it", func(t *testing.T) {
		erin := h.Enroll(t, "user:erin")
		tk, err := desk.Grant(ctx, stepuptest.Approver, spec)
		require.NoError(t, err)
		p, err := desk.Prompt(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{stepuptest.Approver}, p.Approvers)
		_, err = erin.Assert(p.Options)
		require.Error(t, err, "the request lists only dana's credentials")
		var opts map[string]any
		require.NoError(t, json.Unmarshal(p.Options, &opts))
		delete(opts, "allowCredentials")
		open, err := json.Marshal(opts)
		require.NoError(t, err)
		assertion, err := erin.Assert(open)
		require.NoError(t, err)
		_, err = desk.Approve(ctx, tk.ID, assertion)
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
		denyAnswer, err := erin.Assert(p.DenyOptions, stepuptest.WithCredential(erin.CredentialIDs()[0]))
		require.NoError(t, err)
		_, err = desk.Deny(ctx, tk.ID, denyAnswer, "")
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
		_, err = h.Store.GetGrant(ctx, string(tk.ID))
		assert.Error(t, err, "no grant without its user's passkey")
	})
	t.Run("the card shows the grant and its receipt verifies", func(t *testing.T) {
		s := spec
		s.Uses = 2
		tk, err := desk.Grant(ctx, stepuptest.Approver, s)
		require.NoError(t, err)
		p, err := desk.Prompt(ctx, tk.ID)
		require.NoError(t, err)
		assert.Contains(t, p.Card.Text(), "Delegate approval (grant)")
		assert.Contains(t, p.Card.Text(), "A-17")
		_, err = h.Approve(tk.ID)
		require.NoError(t, err)
		r, err := desk.Receipt(ctx, tk.ID)
		require.NoError(t, err)
		res, err := receipt.Verify(r, trustedKeyOf(t, h.Authenticator), rpPolicy)
		require.NoError(t, err)
		assert.NoError(t, res.Err())
		assert.Equal(t, plug.GrantTool, res.Effect.Tool)
	})
	t.Run("the runtime cannot propose a grant, whatever the policy", func(t *testing.T) {
		lax := stepuptest.NewGate(t, askForEverything{})
		args, _ := json.Marshal(map[string]any{"grant": refundTemplate(), "uses": 1000, "expires_at": "2100-01-01T00:00:00Z"})
		tk, err := lax.Gate.Propose(ctx, stepup.Call{Tool: plug.GrantTool, Args: args, Session: "s",
			Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:support"}})
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusDenied, tk.Status)
		assert.Equal(t, "unknown tool", tk.Reason)
	})
	t.Run("the runtime cannot execute a grant ticket", func(t *testing.T) {
		tk, err := desk.Grant(ctx, stepuptest.Approver, spec)
		require.NoError(t, err)
		_, err = h.Gate.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrNotApproved)
	})
	t.Run("malformed requests", func(t *testing.T) {
		for name, s := range map[string]gate.GrantSpec{
			"no uses":            {Grant: refundTemplate(), ExpiresAt: spec.ExpiresAt},
			"expired":            {Grant: refundTemplate(), Uses: 1, ExpiresAt: h.Clock.Now()},
			"template of erin":   {Grant: func() grant.Grant { g := refundTemplate(); g.Template.User = "user:erin"; return g }(), Uses: 1, ExpiresAt: spec.ExpiresAt},
			"plan with uses":     {Grant: grant.Plan(canon.Digest{1}), Uses: 1, ExpiresAt: spec.ExpiresAt},
			"invalid grant kind": {Grant: grant.Grant{Kind: "all"}, Uses: 1, ExpiresAt: spec.ExpiresAt},
		} {
			_, err := desk.Grant(ctx, stepuptest.Approver, s)
			assert.ErrorIs(t, err, stepup.ErrConfig, name)
		}
		_, err := desk.Grant(ctx, "agent:support", spec)
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
	})
}

// TestGrantRecoveredAfterACrash: the gate stopped after consuming an
// approved grant ticket and before storing the grant; Recover stores it
// with the same key, under the ticket's id.
func TestGrantRecoveredAfterACrash(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, refundCatalog(t, ""))
	st := &crashingGrants{Store: h.Store}
	st.crash.Store(true)
	g, err := gate.New(st, refundCatalog(t, ""), stepuptest.Passkeys(h.Store), gate.WithLocalClock(h.Clock.Now),
		gate.WithDwell(0))
	require.NoError(t, err)
	tk, err := g.Desk().Grant(ctx, stepuptest.Approver, gate.GrantSpec{
		Grant: refundTemplate(), Uses: 1, ExpiresAt: h.Clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	id := string(tk.ID)
	func() {
		defer func() { assert.NotNil(t, recover(), "the gate died while storing the grant") }()
		_, _ = stepuptest.Approve(ctx, g.Desk(), h.Authenticator, tk.ID)
	}()
	_, err = h.Store.GetGrant(ctx, id)
	require.Error(t, err, "crashed before the grant was stored")

	h.Clock.Advance(gate.DefaultLease) // the crashed gate's lease runs out
	watchExpired(t, h.Clock, gate.DefaultLease, g)
	res, err := g.Recover(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.JSONEq(t, `{"grant":"`+id+`"}`, string(res[0].Output))
	got, err := h.Store.GetGrant(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, got.User)
	assert.Equal(t, 1, got.Remaining)
}

// crashingGrants dies (panics) on its first PutGrant while crash is set,
// as a gate process killed while storing a grant.
type crashingGrants struct {
	store.Store
	crash atomic.Bool
}

func (c *crashingGrants) PutGrant(ctx context.Context, g store.Grant) error {
	if c.crash.Swap(false) {
		panic("process killed")
	}
	return c.Store.PutGrant(ctx, g)
}

// askForEverything is a policy that sends every call to an approver.
type askForEverything struct{}

func (askForEverything) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	return plug.Decision{Verdict: plug.NeedsApproval, PolicyVersion: "lax-1", Class: card.ClassExternal}, nil
}

// TestGrantUseSpentOnlyWithItsCall: a grant's use is taken in the
// transaction that stores its call approved: calls the gate refuses (an
// oversized rationale, a store that cannot keep the call) spend none.
func TestGrantUseSpentOnlyWithItsCall(t *testing.T) {
	ctx := context.Background()
	w := newGrantWorld(t, refundTemplate(), 2)
	for i := range 3 {
		c := refund(`{"order":"A-17","amount":80}`)
		c.Step = fmt.Sprint("big-", i)
		c.Rationale = strings.Repeat("x", 2<<20)
		tk, _ := w.propose(t, c)
		require.Equal(t, stepup.StatusDenied, tk.Status)
	}
	rec, err := w.Store.GetGrant(ctx, w.grant)
	require.NoError(t, err)
	assert.Equal(t, 2, rec.Remaining, "no use spent on refused calls")
	for i := range 2 {
		c := refund(`{"order":"A-17","amount":80}`)
		c.Step = fmt.Sprint("ok-", i)
		tk, _ := w.propose(t, c)
		assert.Equal(t, stepup.StatusApproved, tk.Status)
	}
	c := refund(`{"order":"A-17","amount":80}`)
	c.Step = "third"
	tk, row := w.propose(t, c)
	assert.Equal(t, stepup.StatusPending, tk.Status)
	assert.Contains(t, row.Reason, "no uses left")
}
