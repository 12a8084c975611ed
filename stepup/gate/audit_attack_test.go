package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// auditFar is after every time these tests reach.
var auditFar = stepuptest.Start().Add(365 * 24 * time.Hour)

// failingDraft is an executor that always fails.
type failingDraft struct{}

func (failingDraft) Execute(context.Context, canon.Effect, string) ([]byte, error) {
	return nil, errors.New("draft store down")
}

// TestEveryDecisionHasItsAuditRow: each decision a gate makes, through
// every face (propose allowed, denied and parked, for well-formed and
// malformed calls; approve, deny, cancel, revoke; execute that runs, fails
// or is refused; a timeout), appends at least one audit row naming it, and
// the chain of all of them verifies.
func TestEveryDecisionHasItsAuditRow(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorld(t)
	rows := func() []audit.Record {
		r, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
		require.NoError(t, err)
		return r
	}
	step := 0
	call := func(tool, args string) stepup.Call {
		step++
		c := stepuptest.SendEmail("finance@example.com")
		c.Tool, c.Args, c.Step, c.Session = tool, json.RawMessage(args), fmt.Sprint(step), fmt.Sprintf("audit-%d", step)
		return c
	}
	// expect runs op and checks that it appended a row with decision want
	// (about ticket id, when op names one).
	expect := func(name, want string, op func() (stepup.TicketID, error)) stepup.TicketID {
		t.Helper()
		before := len(rows())
		id, err := op()
		_ = err // refusals are decisions too
		after := rows()
		found := false
		for _, r := range after[before:] {
			if r.Decision == want && (id == "" || r.TicketID == string(id)) {
				found = true
			}
		}
		assert.True(t, found, "%s: no %q audit row among %d new rows", name, want, len(after)-before)
		return id
	}
	propose := func(c stepup.Call) func() (stepup.TicketID, error) {
		return func() (stepup.TicketID, error) {
			tk, err := w.Gate.Propose(ctx, c)
			return tk.ID, err
		}
	}
	for _, d := range stepuptest.SeedDecisions() {
		want := map[stepup.Status]string{stepup.StatusAllowed: audit.DecisionAllow,
			stepup.StatusPending: audit.DecisionNeedsApproval, stepup.StatusDenied: audit.DecisionDeny}[d.Status]
		expect("propose "+d.Tool, want, propose(call(d.Tool, d.Args)))
	}
	malformed := map[string]func(*stepup.Call){
		"no agent":         func(c *stepup.Call) { c.Principal.Agent = "" },
		"user in capitals": func(c *stepup.Call) { c.Principal.User = "user:Dana" },
		"reserved user":    func(c *stepup.Call) { c.Principal.User = "policy:x" },
		"agent as user":    func(c *stepup.Call) { c.Principal.User = "agent:reports" },
		"no session":       func(c *stepup.Call) { c.Session = "" },
		"reserved tool":    func(c *stepup.Call) { c.Tool = plug.GrantTool },
		"bad UTF-8":        func(c *stepup.Call) { c.Task = "t\xff" },
		"NUL":              func(c *stepup.Call) { c.Step = "a\x00b" },
		"huge rationale":   func(c *stepup.Call) { c.Rationale = strings.Repeat("r", canon.MaxText+1) },
		"duplicate keys":   func(c *stepup.Call) { c.Args = json.RawMessage(`{"to":"a@example.com","to":"b@evil.net"}`) },
		"array args":       func(c *stepup.Call) { c.Args = json.RawMessage(`[1]`) },
		"2^53+1":           func(c *stepup.Call) { c.Args = json.RawMessage(`{"to":"a@example.com","n":9007199254740993}`) },
		"lone surrogate":   func(c *stepup.Call) { c.Args = json.RawMessage(`{"to":"\ud800"}`) },
	}
	for name, bend := range malformed {
		c := call("send_email", `{"to":"finance@example.com"}`)
		bend(&c)
		expect("propose "+name, audit.DecisionDeny, propose(c))
	}

	pending := func() stepup.TicketID {
		tk, err := w.Gate.Propose(ctx, call("send_email", fmt.Sprintf(`{"to":"finance@example.com","subject":"n%d"}`, step)))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		return tk.ID
	}
	approved := func() stepup.TicketID {
		id := pending()
		_, err := w.Approve(id)
		require.NoError(t, err)
		return id
	}
	id := pending()
	expect("approve", audit.DecisionApproved, func() (stepup.TicketID, error) { _, err := w.Approve(id); return id, err })
	expect("execute", audit.DecisionExecuted, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	expect("execute again", audit.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	expect("execute pending", audit.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	expect("deny", audit.DecisionDenied, func() (stepup.TicketID, error) { _, err := w.Deny(id, "no"); return id, err })
	expect("execute denied", audit.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	expect("cancel", audit.DecisionCancelled, func() (stepup.TicketID, error) {
		_, err := w.Gate.Cancel(ctx, id, "withdrawn")
		return id, err
	})
	id = approved()
	expect("revoke", audit.DecisionRevoked, func() (stepup.TicketID, error) {
		_, err := w.Gate.Admin().RevokeTicket(ctx, id, "user:ops", "mistake")
		return id, err
	})
	expect("execute revoked", audit.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = approved()
	w.Clock.Advance(gate.DefaultTTL + time.Second)
	expect("execute expired", audit.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	w.Clock.Advance(gate.DefaultTTL + time.Second)
	expect("sweep", audit.DecisionCancelled, func() (stepup.TicketID, error) { _, err := w.Gate.Sweep(ctx); return id, err })
	require.NoError(t, audit.VerifyChain(rows(), canon.Digest{}))

	// An executor that fails: its own gate, since the world runs every
	// seed tool with a recorder.
	h := stepuptest.NewGate(t, nil, gate.WithExecutor("write_draft", failingDraft{}))
	draft, err := h.Gate.Propose(ctx, call("write_draft", `{"to":"finance@example.com"}`))
	require.NoError(t, err)
	_, err = h.Gate.Execute(ctx, draft.ID)
	require.Error(t, err)
	last, err := h.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
	require.NoError(t, err)
	assert.Equal(t, audit.DecisionFailed, last[len(last)-1].Decision, "a failed run has its row")
	assert.Equal(t, string(draft.ID), last[len(last)-1].TicketID)
	require.NoError(t, audit.VerifyChain(last, canon.Digest{}))
}

// TestAuditChainRefusesEveryEdit: after a run of decisions, changing any
// one field of any row, deleting an inner row or swapping two rows breaks
// the chain.
func TestAuditChainRefusesEveryEdit(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorld(t)
	for i, d := range stepuptest.SeedDecisions() {
		c := stepuptest.SendEmail("finance@example.com")
		c.Tool, c.Args, c.Step = d.Tool, json.RawMessage(d.Args), fmt.Sprint(i)
		tk, err := w.Gate.Propose(ctx, c)
		require.NoError(t, err)
		if tk.Status == stepup.StatusPending {
			_, err = w.Approve(tk.ID)
			require.NoError(t, err)
			_, err = w.Gate.Execute(ctx, tk.ID)
			require.NoError(t, err)
		}
	}
	rows, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
	edits := map[string]func(r *audit.Record){
		"seq":        func(r *audit.Record) { r.Seq++ },
		"time":       func(r *audit.Record) { r.Time++ },
		"ticket":     func(r *audit.Record) { r.TicketID += "x" },
		"task":       func(r *audit.Record) { r.Task += "x" },
		"step":       func(r *audit.Record) { r.Step += "x" },
		"session":    func(r *audit.Record) { r.Session += "x" },
		"tool":       func(r *audit.Record) { r.Tool += "x" },
		"class":      func(r *audit.Record) { r.EffectClass += "x" },
		"digest":     func(r *audit.Record) { r.ArgsDigest[0] ^= 1 },
		"args":       func(r *audit.Record) { r.Args = json.RawMessage(`{"x":1}`) },
		"user":       func(r *audit.Record) { r.Principal.User += "x" },
		"agent":      func(r *audit.Record) { r.Principal.Agent += "x" },
		"delegation": func(r *audit.Record) { r.Principal.Delegations = append(r.Principal.Delegations, "user:x") },
		"policy":     func(r *audit.Record) { r.PolicyVersion += "x" },
		"decision":   func(r *audit.Record) { r.Decision = audit.DecisionApproved + "x" },
		"reason":     func(r *audit.Record) { r.Reason += " " },
		"taint":      func(r *audit.Record) { r.Taint = append(r.Taint, "web") },
		"approver":   func(r *audit.Record) { r.Approver += "x" },
		"nonce":      func(r *audit.Record) { r.Nonce += "00" },
		"card":       func(r *audit.Record) { r.CardHash += "00" },
		"millis":     func(r *audit.Record) { r.DecisionMillis++ },
		"result":     func(r *audit.Record) { r.Result += "x" },
		"key":        func(r *audit.Record) { r.IdempotencyKey += "x" },
		"prev":       func(r *audit.Record) { r.PrevHash[31] ^= 1 },
		"hash":       func(r *audit.Record) { r.Hash[31] ^= 1 },
	}
	for i := range rows {
		for name, edit := range edits {
			edited := append([]audit.Record(nil), rows...)
			r := edited[i]
			r.Principal.Delegations = append([]string(nil), r.Principal.Delegations...)
			r.Taint = append([]string(nil), r.Taint...)
			edit(&r)
			edited[i] = r
			assert.Error(t, audit.VerifyChain(edited, canon.Digest{}), "row %d, %s edited", i, name)
		}
	}
	for i := 1; i+1 < len(rows); i++ {
		cut := append(append([]audit.Record(nil), rows[:i]...), rows[i+1:]...)
		assert.Error(t, audit.VerifyChain(cut, canon.Digest{}), "row %d deleted", i)
		swapped := append([]audit.Record(nil), rows...)
		swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
		assert.Error(t, audit.VerifyChain(swapped, canon.Digest{}), "rows %d and %d swapped", i, i+1)
	}
}

// TestRefusedAnswersLeaveAnAuditRow: an answer an enrolled person's
// authenticator signed for this ticket's challenge that the desk refuses
// (another person's passkey, the wrong origin, no user verification) is
// an attempt to decide a ticket, as Execute's refusals ("not_run") are attempts to run
// one: it leaves a "refused" row, so forged or misdirected approvals show
// in the chain. (Answers nobody's key signed for this ticket leave none,
// since anyone can make or replay them:
// TestAnswersNoEnrolledKeySignedLeaveNoAuditRow.)
func TestRefusedAnswersLeaveAnAuditRow(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorld(t)
	mallory := w.Enroll(t, "user:mallory")
	count := func() int {
		r, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
		require.NoError(t, err)
		return len(r)
	}
	attempts := map[string]func(id stepup.TicketID) error{
		"another person's passkey": func(id stepup.TicketID) error {
			_, err := stepuptest.Approve(ctx, w.Gate.Desk(), mallory, id, stepuptest.WithCredential(mallory.CredentialIDs()[0]))
			return err
		},
		"wrong origin": func(id stepup.TicketID) error {
			_, err := w.Approve(id, stepuptest.WithOrigin("https://approve.evil.net"))
			return err
		},
		"no user verification": func(id stepup.TicketID) error {
			_, err := w.Approve(id, stepuptest.WithoutUserVerification())
			return err
		},
	}
	for name, attempt := range attempts {
		c := stepuptest.SendEmail("finance@example.com")
		c.Step = name
		tk, err := w.Gate.Propose(ctx, c)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		before := count()
		require.Error(t, attempt(tk.ID), name)
		assert.Greater(t, count(), before, "%s: refused without an audit row", name)
	}
}
