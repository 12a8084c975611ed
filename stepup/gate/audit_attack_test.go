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

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
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
	rows := func() []receipt.AuditRecord {
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
		want := map[stepup.Status]string{stepup.StatusAllowed: receipt.DecisionAllow,
			stepup.StatusPending: receipt.DecisionNeedsApproval, stepup.StatusDenied: receipt.DecisionDeny}[d.Status]
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
		expect("propose "+name, receipt.DecisionDeny, propose(c))
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
	expect("approve", receipt.DecisionApproved, func() (stepup.TicketID, error) { _, err := w.Approve(id); return id, err })
	expect("execute", receipt.DecisionExecuted, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	expect("execute again", receipt.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	expect("execute pending", receipt.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	expect("deny", receipt.DecisionDenied, func() (stepup.TicketID, error) { _, err := w.Deny(id, "no"); return id, err })
	expect("execute denied", receipt.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	expect("cancel", receipt.DecisionCancelled, func() (stepup.TicketID, error) {
		_, err := w.Gate.Cancel(ctx, id, "withdrawn")
		return id, err
	})
	id = approved()
	expect("revoke", receipt.DecisionRevoked, func() (stepup.TicketID, error) {
		_, err := w.Gate.Admin().RevokeTicket(ctx, id, "user:ops", "mistake")
		return id, err
	})
	expect("execute revoked", receipt.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = approved()
	w.Clock.Advance(gate.DefaultTTL + time.Second)
	expect("execute expired", receipt.DecisionNotRun, func() (stepup.TicketID, error) { _, err := w.Gate.Execute(ctx, id); return id, err })
	id = pending()
	w.Clock.Advance(gate.DefaultTTL + time.Second)
	expect("sweep", receipt.DecisionCancelled, func() (stepup.TicketID, error) { _, err := w.Gate.Sweep(ctx); return id, err })
	require.NoError(t, receipt.VerifyChain(rows(), canon.Digest{}))

	// An executor that fails: its own gate, since the world runs every
	// seed tool with a recorder.
	h := stepuptest.NewGate(t, nil, gate.WithExecutor("write_draft", failingDraft{}))
	draft, err := h.Gate.Propose(ctx, call("write_draft", `{"to":"finance@example.com"}`))
	require.NoError(t, err)
	_, err = h.Gate.Execute(ctx, draft.ID)
	require.Error(t, err)
	last, err := h.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
	require.NoError(t, err)
	assert.Equal(t, receipt.DecisionFailed, last[len(last)-1].Decision, "a failed run has its row")
	assert.Equal(t, string(draft.ID), last[len(last)-1].TicketID)
	require.NoError(t, receipt.VerifyChain(last, canon.Digest{}))
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
	require.NoError(t, receipt.VerifyChain(rows, canon.Digest{}))
	edits := map[string]func(r *receipt.AuditRecord){
		"seq":        func(r *receipt.AuditRecord) { r.Seq++ },
		"time":       func(r *receipt.AuditRecord) { r.Time++ },
		"ticket":     func(r *receipt.AuditRecord) { r.TicketID += "x" },
		"task":       func(r *receipt.AuditRecord) { r.Task += "x" },
		"step":       func(r *receipt.AuditRecord) { r.Step += "x" },
		"session":    func(r *receipt.AuditRecord) { r.Session += "x" },
		"tool":       func(r *receipt.AuditRecord) { r.Tool += "x" },
		"class":      func(r *receipt.AuditRecord) { r.EffectClass += "x" },
		"digest":     func(r *receipt.AuditRecord) { r.ArgsDigest[0] ^= 1 },
		"args":       func(r *receipt.AuditRecord) { r.Args = json.RawMessage(`{"x":1}`) },
		"user":       func(r *receipt.AuditRecord) { r.Principal.User += "x" },
		"agent":      func(r *receipt.AuditRecord) { r.Principal.Agent += "x" },
		"delegation": func(r *receipt.AuditRecord) { r.Principal.Delegations = append(r.Principal.Delegations, "user:x") },
		"policy":     func(r *receipt.AuditRecord) { r.PolicyVersion += "x" },
		"decision":   func(r *receipt.AuditRecord) { r.Decision = receipt.DecisionApproved + "x" },
		"reason":     func(r *receipt.AuditRecord) { r.Reason += " " },
		"taint":      func(r *receipt.AuditRecord) { r.Taint = append(r.Taint, "web") },
		"approver":   func(r *receipt.AuditRecord) { r.Approver += "x" },
		"nonce":      func(r *receipt.AuditRecord) { r.Nonce += "00" },
		"card":       func(r *receipt.AuditRecord) { r.CardHash += "00" },
		"millis":     func(r *receipt.AuditRecord) { r.DecisionMillis++ },
		"result":     func(r *receipt.AuditRecord) { r.Result += "x" },
		"key":        func(r *receipt.AuditRecord) { r.IdempotencyKey += "x" },
		"prev":       func(r *receipt.AuditRecord) { r.PrevHash[31] ^= 1 },
		"hash":       func(r *receipt.AuditRecord) { r.Hash[31] ^= 1 },
	}
	for i := range rows {
		for name, edit := range edits {
			edited := append([]receipt.AuditRecord(nil), rows...)
			r := edited[i]
			r.Principal.Delegations = append([]string(nil), r.Principal.Delegations...)
			r.Taint = append([]string(nil), r.Taint...)
			edit(&r)
			edited[i] = r
			assert.Error(t, receipt.VerifyChain(edited, canon.Digest{}), "row %d, %s edited", i, name)
		}
	}
	for i := 1; i+1 < len(rows); i++ {
		cut := append(append([]receipt.AuditRecord(nil), rows[:i]...), rows[i+1:]...)
		assert.Error(t, receipt.VerifyChain(cut, canon.Digest{}), "row %d deleted", i)
		swapped := append([]receipt.AuditRecord(nil), rows...)
		swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
		assert.Error(t, receipt.VerifyChain(swapped, canon.Digest{}), "rows %d and %d swapped", i, i+1)
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
