package gate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/sqlite"
)

// The gate's hardening, failure class by failure class, through the
// public API on every store: store/memory, store/sqlite (a file) and
// store/postgres (a schema of its own, when ASU_POSTGRES_DSN is set).
// The properties are the ones the memory-only tests of the same classes
// check; here each runs against a database, where a decision and its
// audit row, a grant use and its ticket, a counter and its key are
// rows and transactions rather than maps.

// rig is one backend opened for one scenario: the store, the clock the
// gate measures its own waits by (on memory and SQLite also the store's
// clock; PostgreSQL's clock is the database's, which a test cannot
// move), the enrollment of approvers, and a file resolver root holding
// q3.csv.
type rig struct {
	st     store.Store
	local  *stepuptest.Clock
	fake   bool // the store reads local; otherwise the database's clock
	enroll *passkey.Enrollment
	dir    string
	noNUL  string // why a refused call holding a NUL byte gets no row, when it does not
}

// rigKey is the MAC key of every gate of a rig: gates built one after
// the other on one store verify each other's approvals.
func rigKey() []byte { return []byte("the key every gate of one rig's store shares") }

// backend opens a fresh rig; skip, when set, says why it cannot run.
type backend struct {
	name string
	skip string
	open func(t *testing.T) *rig
}

func backends() []backend {
	fake := func(t *testing.T, open func(clock *stepuptest.Clock) store.Store) *rig {
		clock := stepuptest.NewClock(stepuptest.Start())
		st := open(clock)
		t.Cleanup(func() { _ = st.Close() })
		e, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(clock.Now),
			passkey.WithSealKey(stepuptest.SealKey()))
		require.NoError(t, err)
		return newRig(t, st, clock, true, e)
	}
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	pg := backend{name: "postgres", open: func(t *testing.T) *rig {
		st := openPostgresSchema(t, dsn)
		return newRig(t, st, stepuptest.NewClock(stepuptest.Start()), false, stepuptest.Enrollment(st))
	}}
	if dsn == "" {
		pg.skip = "PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them"
	}
	return []backend{
		{name: "memory", open: func(t *testing.T) *rig {
			return fake(t, func(c *stepuptest.Clock) store.Store { return memory.New(&memory.Options{Clock: c.Now}) })
		}},
		{name: "sqlite", open: func(t *testing.T) *rig {
			return fake(t, func(c *stepuptest.Clock) store.Store {
				st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), &sqlite.Options{Clock: c.Now})
				require.NoError(t, err)
				return st
			})
		}},
		pg,
	}
}

func newRig(t *testing.T, st store.Store, local *stepuptest.Clock, fake bool, e *passkey.Enrollment) *rig {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "q3.csv"), []byte(stepuptest.Q3), 0o600))
	return &rig{st: st, local: local, fake: fake, enroll: e, dir: dir}
}

// openPostgresSchema opens store/postgres in a fresh schema of dsn's
// database and drops the schema when t ends.
func openPostgresSchema(t *testing.T, dsn string) store.Store {
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "gate_" + hex.EncodeToString(b[:])
	st, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = st.Close()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return st
}

// now is the store's time, as far as a test can tell: the fake clock, or
// the wall clock for a database keeping its own.
func (r *rig) now() time.Time {
	if r.fake {
		return r.local.Now()
	}
	return time.Now()
}

// elapse lets d pass on the store's clock.
func (r *rig) elapse(d time.Duration) {
	if r.fake {
		r.local.Advance(d)
		return
	}
	time.Sleep(d)
}

// gate builds a gate on the rig's store deciding with policy, answering
// through approver, with the rig's key, resolver and local clock.
func (r *rig) gate(t *testing.T, p plug.Policy, approver plug.Approver, opts ...gate.Option) *gate.Gate {
	t.Helper()
	base := []gate.Option{gate.WithLocalClock(r.local.Now), gate.WithDwell(0), gate.WithKey(rigKey()),
		gate.WithResolver(canon.FileResolver{Root: r.dir})}
	g, err := gate.New(r.st, p, approver, append(base, opts...)...)
	require.NoError(t, err)
	return g
}

// person enrolls user through an invite and returns their authenticator.
func (r *rig) person(t *testing.T, user string) *stepuptest.Authenticator {
	t.Helper()
	a, err := stepuptest.Enroll(context.Background(), r.enroll, user)
	require.NoError(t, err)
	return a
}

// rowsOf returns the audit rows of ticket id, by Seq.
func (r *rig) rowsOf(t *testing.T, id stepup.TicketID) []audit.Record {
	t.Helper()
	all, err := r.st.AuditSeq(context.Background(), 0, math.MaxUint64)
	require.NoError(t, err)
	var out []audit.Record
	for _, row := range all {
		if row.TicketID == string(id) {
			out = append(out, row)
		}
	}
	return out
}

// rigCatalog is the seed catalog at version, its refund (irreversible,
// up to 500, run by the payments executor) routed to group when one is
// named, each tool passed through edit when it is set.
func rigCatalog(t *testing.T, version, group string, edit func(*policy.Tool)) *policy.Catalog {
	t.Helper()
	tools := stepuptest.SeedTools()
	for i := range tools {
		if tools[i].Name == "issue_refund" {
			tools[i].Approvers, tools[i].Audience = group, "payments"
		}
		if edit != nil {
			edit(&tools[i])
		}
	}
	c, err := policy.NewCatalog(version, tools...)
	require.NoError(t, err)
	return c
}

// seedCatalog is rigCatalog at the seed version, no group, no edit.
func seedCatalog(t *testing.T) *policy.Catalog {
	return rigCatalog(t, stepuptest.SeedPolicyVersion, "", nil)
}

// rigCall is a call of tool with args, on behalf of user through
// agent:reports, in session, at step.
func rigCall(tool, args, user, session, step string) stepup.Call {
	return stepup.Call{Tool: tool, Args: json.RawMessage(args), Task: "t-hard", Step: step, Session: session,
		Principal: canon.Principal{User: user, Agent: "agent:reports"}}
}

// executors has rec run every seed tool but those of except.
func executors(rec plug.Executor, except ...string) []gate.Option {
	var out []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		if !slices.Contains(except, tool.Name) {
			out = append(out, gate.WithExecutor(tool.Name, rec))
		}
	}
	return out
}

// TestHardeningOnBackends runs every scenario on every backend, as
// backend/scenario.
func TestHardeningOnBackends(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, r *rig)
	}{
		{"approver rule", approverRuleScenario},
		{"policy at execute", policyAtExecuteScenario},
		{"grant use and park together", grantUseScenario},
		{"limits scoped by tenant", tenantScopeScenario},
		{"every refusal has a row", refusalRowScenario},
		{"distinct statuses", statusScenario},
		{"principal syntax", principalScenario},
		{"NUL bytes refused with a row", nulScenario},
	}
	for _, b := range backends() {
		for _, s := range scenarios {
			t.Run(b.name+"/"+s.name, func(t *testing.T) {
				if b.skip != "" {
					t.Skip(b.skip)
				}
				s.run(t, b.open(t))
			})
		}
	}
}

// sayAs is an approver that answers in user's name and checks nothing:
// who may decide is the gate's to enforce, whatever the Approver.
type sayAs struct{ user string }

func (sayAs) Options(context.Context, plug.Request) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (a sayAs) Verify(context.Context, plug.Request, []byte) (plug.Verified, error) {
	return plug.Verified{User: a.user, Evidence: []byte(`{"verdict":"approve"}`)}, nil
}

func (sayAs) Recheck(context.Context, plug.Answer) error { return nil }

// approverRuleScenario (failure 1): a ticket is approved by the user it
// runs on behalf of, or, when the policy names a group, by its members
// only; another enrolled person signing with their own passkey, the
// requester's agent and its delegations never decide.
func approverRuleScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	dana, eve, fin := r.person(t, "user:dana"), r.person(t, "user:eve"), r.person(t, "user:fin")
	rec := &stepuptest.Recorder{}
	routes := []struct {
		name    string
		group   string
		may     *stepuptest.Authenticator
		mayNot  map[string]*stepuptest.Authenticator
		options []gate.Option
	}{
		{"no group", "", dana, map[string]*stepuptest.Authenticator{"user:eve": eve, "user:fin": fin}, nil},
		{"group finance", "finance", fin, map[string]*stepuptest.Authenticator{"user:eve": eve, "user:dana": dana},
			[]gate.Option{gate.WithApproverGroup("finance", "user:fin")}},
	}
	for i, route := range routes {
		cat := rigCatalog(t, stepuptest.SeedPolicyVersion, route.group, nil)
		g := r.gate(t, cat, stepuptest.Passkeys(r.st), append(executors(rec), route.options...)...)
		call := rigCall("issue_refund", `{"order":"A-17","amount":120}`, "user:dana", fmt.Sprint("s-route-", i), "s-1")
		call.Principal.Delegations = []string{"user:erin"}
		tk, err := g.Propose(ctx, call)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		for name, a := range route.mayNot {
			p, err := g.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			// The attacker ignores the allowed credentials and signs the
			// ticket's own challenge with their own passkey.
			answer, err := a.Assert(p.Options, stepuptest.WithCredential(a.CredentialIDs()[0]))
			require.NoError(t, err)
			_, err = g.Desk().Approve(ctx, tk.ID, answer)
			assert.ErrorIs(t, err, stepup.ErrNotPermitted, "%s: %s approved", route.name, name)
		}
		for _, name := range []string{"agent:reports", "user:erin", "agent:dana"} {
			other := r.gate(t, cat, sayAs{name}, append(executors(rec), route.options...)...)
			_, err := other.Desk().Approve(ctx, tk.ID, []byte(`yes`))
			assert.ErrorIs(t, err, stepup.ErrNotPermitted, "%s: %s approved", route.name, name)
		}
		got, err := g.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, got.Status, "%s: nobody else decided", route.name)
		_, err = g.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrNotApproved)

		got, err = stepuptest.Approve(ctx, g.Desk(), route.may, tk.ID)
		require.NoError(t, err, route.name)
		require.Equal(t, stepup.StatusApproved, got.Status)
		_, err = g.Execute(ctx, tk.ID)
		require.NoError(t, err)
	}
	assert.Equal(t, len(routes), rec.Count(), "only the rightful approvals ran")
}

// policyAtExecuteScenario (failure 2): a ticket approved by a person, or
// allowed by the policy, under one catalog does not run on a gate
// deciding with another (a new version, the tool removed, a limit
// lowered): Execute fails with ErrPolicyChanged, nothing runs, nothing is
// spent, and the gate of the old catalog still runs it.
func policyAtExecuteScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	dana := r.person(t, "user:dana")
	old := &stepuptest.Recorder{}
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), executors(old)...)
	lower := func(tl *policy.Tool) {
		tl.Limits = append(tl.Limits, policy.MaxAmount("amount", "100"), policy.AllowDomains("to", "example.org"))
	}
	edits := []struct {
		name string
		cat  *policy.Catalog
	}{
		{"new version", rigCatalog(t, "2026-12-01.1", "", nil)},
		{"tool removed", rigCatalog(t, stepuptest.SeedPolicyVersion, "", func(tl *policy.Tool) {
			if tl.Name == "issue_refund" || tl.Name == "write_draft" {
				tl.Name += "_v2"
			}
			if tl.Timeout.Alternative == "write_draft" {
				tl.Timeout.Alternative += "_v2"
			}
		})},
		{"limit lowered, same version", rigCatalog(t, stepuptest.SeedPolicyVersion, "", lower)},
		{"limit lowered, new version", rigCatalog(t, "2026-12-01.2", "", lower)},
	}
	ran := 0
	for i, e := range edits {
		refund := rigCall("issue_refund", `{"order":"A-17","amount":300}`, "user:dana", "s-policy", fmt.Sprint("refund-", i))
		draft := rigCall("write_draft", `{"to":"a@example.com"}`, "user:dana", "s-policy", fmt.Sprint("draft-", i))
		approvedTk, err := g.Propose(ctx, refund)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, approvedTk.Status, approvedTk.Reason)
		approvedTk, err = stepuptest.Approve(ctx, g.Desk(), dana, approvedTk.ID)
		require.NoError(t, err)
		allowedTk, err := g.Propose(ctx, draft)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, allowedTk.Status, allowedTk.Reason)

		exec := &stepuptest.Recorder{}
		next := r.gate(t, e.cat, stepuptest.Passkeys(r.st), executors(exec)...)
		for _, tk := range []stepup.Ticket{approvedTk, allowedTk} {
			_, err := next.Execute(ctx, tk.ID)
			assert.ErrorIs(t, err, stepup.ErrPolicyChanged, "%s: %s", e.name, tk.Tool)
			got, err := next.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.True(t, got.Status.Runnable(), "%s: the refusal spent %s", e.name, got.Status)

			_, err = g.Execute(ctx, tk.ID)
			assert.NoError(t, err, "%s: the gate of the ticket's own policy runs it", e.name)
			ran++
		}
		assert.Zero(t, exec.Count(), "%s: nothing ran under the new policy", e.name)
	}
	assert.Equal(t, ran, old.Count())
}

// grantUseScenario (failure 5): a grant's use and its call's ticket are
// stored together or not at all. Calls the store refuses (a rationale
// over its bound) leave the grant's uses untouched; covered calls spend
// one each until none is left.
func grantUseScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	dana := r.person(t, "user:dana")
	rec := &stepuptest.Recorder{}
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), executors(rec)...)
	tmpl := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}}
	issue, err := g.Desk().Grant(ctx, "user:dana", gate.GrantSpec{Grant: tmpl, Uses: 2, ExpiresAt: r.now().Add(8 * time.Hour)})
	require.NoError(t, err)
	issued, err := stepuptest.Approve(ctx, g.Desk(), dana, issue.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusExecuted, issued.Status)
	grantID := string(issue.ID)

	call := func(step string) stepup.Call {
		c := rigCall("issue_refund", `{"order":"A-17","amount":80}`, "user:dana", "s-grant", step)
		c.Grant = grantID
		return c
	}
	for i := range 3 {
		c := call(fmt.Sprint("big-", i))
		c.Rationale = strings.Repeat("x", store.MaxFieldSize+1)
		tk, err := g.Propose(ctx, c)
		require.ErrorIs(t, err, stepup.ErrTooLarge)
		require.Equal(t, stepup.StatusDenied, tk.Status)
		rows := r.rowsOf(t, tk.ID)
		require.Len(t, rows, 1)
		assert.Equal(t, audit.DecisionDeny, rows[0].Decision)
	}
	rec0, err := r.st.GetGrant(ctx, grantID)
	require.NoError(t, err)
	assert.Equal(t, 2, rec0.Remaining, "no use spent on refused calls")

	for i := range 2 {
		tk, err := g.Propose(ctx, call(fmt.Sprint("ok-", i)))
		require.NoError(t, err)
		rows := r.rowsOf(t, tk.ID)
		require.NotEmpty(t, rows)
		require.Equal(t, stepup.StatusApproved, tk.Status, rows[len(rows)-1].Reason)
		_, err = g.Execute(ctx, tk.ID)
		require.NoError(t, err)
	}
	tk, err := g.Propose(ctx, call("third"))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "the grant is used up: a person decides")
	rows := r.rowsOf(t, tk.ID)
	require.NotEmpty(t, rows)
	assert.Contains(t, rows[len(rows)-1].Reason, "no uses left")
	rec0, err = r.st.GetGrant(ctx, grantID)
	require.NoError(t, err)
	assert.Zero(t, rec0.Remaining)
	assert.Equal(t, 2, rec.Count(), "the two covered calls ran")
}

// tenantScopeScenario (failure 6): two users' agents, both named
// agent:reports, use one session id. Erin's denials lock Erin's agent
// out of it, and Erin's parked calls fill Erin's cap; Dana's agent in the
// same session is neither locked out nor capped.
func tenantScopeScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	erin := r.person(t, "user:erin")
	r.person(t, "user:dana")
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), executors(&stepuptest.Recorder{})...)
	refund := func(user, session string, i int) stepup.Call {
		return rigCall("issue_refund", `{"order":"A-17","amount":50}`, user, session, fmt.Sprint(user, "-", i))
	}
	propose := func(c stepup.Call) stepup.Ticket {
		tk, err := g.Propose(ctx, c)
		require.NoError(t, err)
		return tk
	}

	for i := range flood.DefaultSessionLockout.After {
		tk := propose(refund("user:erin", "run-10", i))
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		_, err := stepuptest.Deny(ctx, g.Desk(), erin, tk.ID, "not mine")
		require.NoError(t, err)
	}
	locked := propose(refund("user:erin", "run-10", 99))
	require.Equal(t, stepup.StatusDenied, locked.Status)
	assert.Contains(t, locked.Reason, "locked out")
	dana := propose(refund("user:dana", "run-10", 0))
	assert.Equal(t, stepup.StatusPending, dana.Status, "Erin's denials locked Dana's agent out: %s", dana.Reason)

	parked := 0
	for i := range flood.DefaultPendingPerSession + 1 {
		tk := propose(refund("user:erin", "run-9", i))
		if tk.Status == stepup.StatusPending {
			parked++
			continue
		}
		require.Equal(t, stepup.StatusDenied, tk.Status)
		assert.Contains(t, tk.Reason, "too many")
		rows := r.rowsOf(t, tk.ID)
		require.Len(t, rows, 1, "the refusal has its row")
		assert.Equal(t, audit.DecisionDeny, rows[0].Decision)
	}
	assert.Equal(t, flood.DefaultPendingPerSession, parked, "Erin's session cap")
	dana = propose(refund("user:dana", "run-9", 1))
	assert.Equal(t, stepup.StatusPending, dana.Status, "Erin's parked calls capped Dana's agent: %s", dana.Reason)
}

// refusalRowScenario (failure 8): every refusal at propose is a denial
// with exactly one audit row, whether the policy, the principal syntax or
// the store's bounds refused it, and the chain stays verifiable.
func refusalRowScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), executors(&stepuptest.Recorder{})...)
	big := func(n int) string { return strings.Repeat("x", n) }
	labels := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("read ", i)
		}
		return out
	}
	cases := map[string]func(c *stepup.Call){
		"unknown tool":        func(c *stepup.Call) { c.Tool = "run_shell" },
		"over the limit":      func(c *stepup.Call) { c.Tool, c.Args = "issue_refund", []byte(`{"order":"A-1","amount":900}`) },
		"no agent":            func(c *stepup.Call) { c.Principal.Agent = "" },
		"look-alike agent":    func(c *stepup.Call) { c.Principal.Agent = "\u0430gent:reports" },
		"long tool":           func(c *stepup.Call) { c.Tool = big(store.MaxKeySize + 1) },
		"long session":        func(c *stepup.Call) { c.Session = big(store.MaxKeySize + 1) },
		"long task":           func(c *stepup.Call) { c.Task = big(store.MaxKeySize + 1) },
		"long user":           func(c *stepup.Call) { c.Principal.User = "user:" + big(store.MaxKeySize) },
		"long agent":          func(c *stepup.Call) { c.Principal.Agent = "agent:" + big(store.MaxKeySize) },
		"long grant":          func(c *stepup.Call) { c.Grant = big(store.MaxKeySize + 1) },
		"long taint label":    func(c *stepup.Call) { c.Taint = []string{"read", big(store.MaxKeySize + 1)} },
		"too many labels":     func(c *stepup.Call) { c.Taint = labels(store.MaxTaint + 1) },
		"too many delegates":  func(c *stepup.Call) { c.Principal.Delegations = labels(store.MaxTaint + 1) },
		"rationale too large": func(c *stepup.Call) { c.Rationale = big(store.MaxFieldSize + 1) },
	}
	for name, edit := range cases {
		c := stepuptest.SendEmail("finance@example.com")
		c.Step = name
		edit(&c)
		tk, err := g.Propose(ctx, c)
		requireRefusal(t, err, "%s: a refusal is an answer, not an error", name)
		assert.Equal(t, stepup.StatusDenied, tk.Status, name)
		rows := r.rowsOf(t, tk.ID)
		if assert.Len(t, rows, 1, "%s: one row for the refusal", name) {
			assert.Equal(t, audit.DecisionDeny, rows[0].Decision, name)
			assert.Less(t, len(fmt.Sprint(rows[0])), 64<<10, "%s: the row holds digests, not the fields", name)
		}
	}
	all, err := r.st.AuditSeq(ctx, 0, math.MaxUint64)
	require.NoError(t, err)
	assert.NoError(t, audit.VerifyChain(all, canon.Digest{}))
}

// statusScenario (failure 9): executed, failed and abandoned are
// distinct final statuses and distinct audit decisions. The abandoned
// ticket is one a crashed gate consumed and recovery found changed: it
// never ran, and does not say it did.
func statusScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	dana := r.person(t, "user:dana")
	rec := &stepuptest.Recorder{}
	opts := append(executors(rec, "issue_refund"), gate.WithExecutor("issue_refund", plug.ExecutorFunc(
		func(context.Context, canon.Effect, string) ([]byte, error) { return nil, fmt.Errorf("card declined") })))
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), opts...)
	approve := func(c stepup.Call) stepup.Ticket {
		tk, err := g.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		tk, err = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
		require.NoError(t, err)
		return tk
	}

	ok, err := g.Propose(ctx, rigCall("write_draft", `{"to":"a@example.com"}`, "user:dana", "s-status", "ok"))
	require.NoError(t, err)
	_, err = g.Execute(ctx, ok.ID)
	require.NoError(t, err)

	failed := approve(rigCall("issue_refund", `{"order":"A-1","amount":5}`, "user:dana", "s-status", "failed"))
	_, err = g.Execute(ctx, failed.ID)
	require.ErrorIs(t, err, stepup.ErrExecutorFailed)

	lost := approve(stepuptest.SendEmail("finance@example.com"))
	at, err := r.st.Now(ctx)
	require.NoError(t, err)
	lease := time.Second
	if !r.fake {
		lease = 50 * time.Millisecond // the database's clock runs on its own
	}
	_, err = r.st.Consume(ctx, string(lost.ID), store.Claim{Key: "key-crashed", Owner: "a-crashed-gate",
		At: at, LeaseUntil: at.Add(lease)}, nil)
	require.NoError(t, err)
	r.elapse(2 * lease)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "q3.csv"), []byte("changed while the gate was down\n"), 0o600))
	results, err := g.Recover(ctx)
	require.NoError(t, err)
	require.Empty(t, results, "a first sighting takes nothing over")
	r.local.Advance(gate.DefaultLease)
	results, err = g.Recover(ctx)
	assert.ErrorIs(t, err, stepup.ErrEffectChanged)
	assert.Empty(t, results)

	want := map[stepup.TicketID]struct {
		status   stepup.Status
		decision string
	}{
		ok.ID:     {stepup.StatusExecuted, audit.DecisionExecuted},
		failed.ID: {stepup.StatusFailed, audit.DecisionFailed},
		lost.ID:   {stepup.StatusAbandoned, audit.DecisionAbandoned},
	}
	for id, w := range want {
		got, err := g.Ticket(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, w.status, got.Status)
		assert.True(t, got.Status.Final(), got.Status)
		rows := r.rowsOf(t, id)
		require.NotEmpty(t, rows)
		assert.Equal(t, w.decision, rows[len(rows)-1].Decision, w.status)
	}
	assert.Equal(t, 1, rec.Count(), "only the draft ran: the abandoned e-mail never did")
}

// lookalikes returns spellings of principal id a person could read as it
// or that the gate reserves: case, padding, invisible characters,
// homoglyphs, fullwidth forms, other kinds.
func lookalikes(id string) []string {
	kind, name, _ := strings.Cut(id, ":")
	return []string{
		strings.ToUpper(kind) + ":" + name, kind + ":" + strings.ToUpper(name[:1]) + name[1:],
		" " + id, id + " ", id + "\n", id + "\t", id + "\u200b", id + "\u0301",
		kind + "\uff1a" + name, kind + "::" + name, kind + ": " + name,
		strings.Replace(id, "a", "\u0430", 1), strings.Replace(id, "e", "\u0435", 1),
		"policy:" + name, "grant:" + name, name, kind + ":", "",
	}
}

// principalScenario (failure 10): look-alike principal ids are refused
// where they enter: an invite for one fails, and a call naming one as
// its user or agent is denied at propose with its audit row and no
// stored ticket.
func principalScenario(t *testing.T, r *rig) {
	ctx := context.Background()
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), executors(&stepuptest.Recorder{})...)
	for _, user := range lookalikes("user:dana") {
		_, err := r.enroll.Invite(ctx, user)
		assert.Error(t, err, "invite for %q", user)
	}
	for _, field := range []string{"user", "agent"} {
		id := map[string]string{"user": "user:dana", "agent": "agent:reports"}[field]
		for _, spoof := range lookalikes(id) {
			c := stepuptest.SendEmail("finance@example.com")
			if field == "user" {
				c.Principal.User = spoof
			} else {
				c.Principal.Agent = spoof
			}
			tk, err := g.Propose(ctx, c)
			require.NoError(t, err, "%s %q", field, spoof)
			assert.Equal(t, stepup.StatusDenied, tk.Status, "%s %q", field, spoof)
			rows := r.rowsOf(t, tk.ID)
			if assert.Len(t, rows, 1, "%s %q: one row", field, spoof) {
				assert.Equal(t, audit.DecisionDeny, rows[0].Decision)
			}
		}
	}
	page, _, err := r.st.List(ctx, store.Filter{})
	require.NoError(t, err)
	assert.Empty(t, page, "a look-alike's call was stored")
}

// nulScenario (failures 8 and 10): a NUL byte in any text of a call, or
// escaped in its arguments, is an answer (the call parks or is denied),
// never a store error, and a denial has its row.
func nulScenario(t *testing.T, r *rig) {
	if r.noNUL != "" {
		t.Skip(r.noNUL)
	}
	ctx := context.Background()
	g := r.gate(t, seedCatalog(t), stepuptest.Passkeys(r.st), append(executors(&stepuptest.Recorder{}),
		gate.WithoutFloodControlUnsafe())...)
	fields := map[string]func(c *stepup.Call){
		"tool":       func(c *stepup.Call) { c.Tool += "\x00" },
		"task":       func(c *stepup.Call) { c.Task += "\x00" },
		"session":    func(c *stepup.Call) { c.Session += "\x00" },
		"grant":      func(c *stepup.Call) { c.Grant = "g\x00" },
		"user":       func(c *stepup.Call) { c.Principal.User += "\x00" },
		"agent":      func(c *stepup.Call) { c.Principal.Agent += "\x00" },
		"delegation": func(c *stepup.Call) { c.Principal.Delegations = []string{"agent:x\x00"} },
		"taint":      func(c *stepup.Call) { c.Taint = []string{"read\x00"} },
		"rationale":  func(c *stepup.Call) { c.Rationale = "why\x00" },
		"argument": func(c *stepup.Call) {
			c.Args = []byte(`{"to":"finance@example.com","subject":"a\u0000b","attachment":"q3.csv"}`)
		},
	}
	for name, edit := range fields {
		c := stepuptest.SendEmail("finance@example.com")
		c.Step = "nul-" + name
		edit(&c)
		tk, err := g.Propose(ctx, c)
		if !assert.NoError(t, err, "%s: a NUL byte is an answer, not a store error", name) {
			continue
		}
		assert.Contains(t, []stepup.Status{stepup.StatusPending, stepup.StatusDenied}, tk.Status, name)
		rows := r.rowsOf(t, tk.ID)
		if assert.Len(t, rows, 1, "%s: one row", name) && tk.Status == stepup.StatusDenied {
			assert.Equal(t, audit.DecisionDeny, rows[0].Decision, name)
		}
	}
}
