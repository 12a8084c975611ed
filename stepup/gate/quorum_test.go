package gate_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// quorumDesk is a gate whose refunds need two of the finance group
// (Dana, Erin, Finn), with their authenticators.
type quorumDesk struct {
	*stepuptest.Harness
	erin, finn *stepuptest.Authenticator
}

func newQuorumDesk(t *testing.T, opts ...gate.Option) *quorumDesk {
	t.Helper()
	tools := policy.RequireQuorum(card.ClassIrreversible, 2, policy.Tool{Name: "issue_refund", Title: "Issue a refund",
		Class: card.ClassIrreversible, Approvers: "finance"}, policy.Tool{Name: "send_email", Class: card.ClassExternal})
	cat, err := policy.NewCatalog("v1", tools...)
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, append([]gate.Option{gate.WithApproverGroup("finance", stepuptest.Approver, "user:erin", "user:finn"),
		gate.WithExecutor("issue_refund", &recorder{})}, opts...)...)
	return &quorumDesk{Harness: h, erin: h.Enroll(t, "user:erin"), finn: h.Enroll(t, "user:finn")}
}

func refundCall() stepup.Call {
	return stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"o-7","amount":40}`),
		Session: "s", Principal: agentFor("user:dana")}
}

// TestRuleOfTwo: a refund runs only after two different people of the
// group approved it, each with their own passkey over the same ticket;
// the first approval leaves it pending and unrunnable, the same person
// again counts for nothing, and the audit chain has a row for each.
func TestRuleOfTwo(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t)
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	p, err := q.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)

	got, err := q.Approve(tk.ID) // Dana
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "one of two")
	mine, err := q.Gate.Desk().Queue(ctx, stepuptest.Approver, 0)
	require.NoError(t, err)
	assert.Empty(t, mine, "Dana has nothing left to decide")
	erins, err := q.Gate.Desk().Queue(ctx, "user:erin", 0)
	require.NoError(t, err)
	require.Len(t, erins, 1)
	assert.Equal(t, []string{stepuptest.Approver}, erins[0].Approved)
	_, err = q.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNotApproved)
	_, err = q.Approve(tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNotPermitted, "Dana twice is still one person")

	got, err = stepuptest.Approve(ctx, q.Gate.Desk(), q.erin, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
	_, err = stepuptest.Approve(ctx, q.Gate.Desk(), q.finn, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrResolved, "a third approval has nothing left to approve")
	_, err = q.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)

	a, err := q.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	require.Len(t, a.Votes, 2)
	assert.Equal(t, []string{stepuptest.Approver, "user:erin"}, []string{a.Votes[0].Approver, a.Votes[1].Approver})
	var decisions, approvers []string
	rows, err := q.Store.AuditRange(ctx, a.CreatedAt.Add(-1), a.CreatedAt.Add(1<<62))
	require.NoError(t, err)
	for _, r := range rows {
		if r.TicketID == string(tk.ID) {
			decisions = append(decisions, r.Decision)
			approvers = append(approvers, r.Approver)
		}
	}
	// The refused early Execute has its row too ("not_run": refused at execute, nothing ran).
	assert.Equal(t, []string{"needs_approval", "cosigned", "not_run", "approved", "executing", "executed"}, decisions)
	assert.Equal(t, stepuptest.Approver, approvers[1])
	assert.Equal(t, "user:erin", approvers[3])

	// The receipts: one per approver over one challenge; a verifier holding
	// both keys sees two people, one key is not two.
	qr, err := q.Gate.Desk().QuorumReceipt(ctx, tk.ID)
	require.NoError(t, err)
	require.Len(t, qr.Receipts, 2)
	assert.Equal(t, p.Challenge[:], challengeOf(t, qr.Receipts[1]))
	raw, err := qr.Marshal()
	require.NoError(t, err)
	back, err := receipt.ParseQuorum(raw)
	require.NoError(t, err)
	dana, erin := trustedKeyOf(t, q.Authenticator), trustedKeyOf(t, q.erin)
	people := []receipt.Person{{User: stepuptest.Approver, Keys: []*receipt.TrustedKey{dana}},
		{User: "user:erin", Keys: []*receipt.TrustedKey{erin}}}
	_, err = receipt.VerifyQuorum(back, people, 2, rpPolicy)
	assert.NoError(t, err)
	_, err = receipt.VerifyQuorum(back, people[:1], 2, rpPolicy)
	assert.ErrorIs(t, err, receipt.ErrQuorum)
	finn := receipt.Person{User: "user:finn", Keys: []*receipt.TrustedKey{trustedKeyOf(t, q.finn)}}
	_, err = receipt.VerifyQuorum(back, append(people, finn), 3, rpPolicy)
	assert.ErrorIs(t, err, receipt.ErrQuorum)
	doubled := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{back.Receipts[0], back.Receipts[0]}}
	_, err = receipt.VerifyQuorum(doubled, people, 2, rpPolicy)
	assert.ErrorIs(t, err, receipt.ErrQuorum, "one person's receipt twice")
	last, err := q.Gate.Desk().Receipt(ctx, tk.ID)
	require.NoError(t, err)
	_, err = receipt.Verify(last, erin, rpPolicy)
	assert.NoError(t, err, "the completing approval's receipt verifies on its own")
}

// challengeOf is the challenge a receipt's client data carries.
func challengeOf(t *testing.T, r *receipt.Receipt) []byte {
	t.Helper()
	var cd struct{ Challenge string }
	require.NoError(t, json.Unmarshal(r.Assertion.ClientDataJSON, &cd))
	var b receipt.Bytes
	require.NoError(t, b.UnmarshalText([]byte(cd.Challenge)))
	return b
}

// TestRuleOfTwoOneApproverConcurrently: the same person approving from
// many tabs at once counts once; two people at once both count.
func TestRuleOfTwoOneApproverConcurrently(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t)
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = q.Approve(tk.ID) }()
	}
	wg.Wait()
	a, err := q.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Pending, a.State)
	assert.Len(t, a.Votes, 1)

	for _, who := range []*stepuptest.Authenticator{q.erin, q.finn} {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = stepuptest.Approve(ctx, q.Gate.Desk(), who, tk.ID) }()
	}
	wg.Wait()
	a, err = q.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	assert.Equal(t, store.Approved, a.State)
	assert.Len(t, a.Votes, 2, "approved at the second; the third found it decided")
}

// TestRuleOfTwoCannotBeBypassed: the database writer cannot approve a
// quorum ticket with one person's evidence, no grant stands in for two
// people, a model never decides, and a group smaller than the quorum gets
// no ticket at all.
func TestRuleOfTwoCannotBeBypassed(t *testing.T) {
	ctx := context.Background()
	m := &fakeModel{answer: `{"decision":"approve","reason":"fine"}`}
	q := newQuorumDesk(t, gate.WithModelJudge(judgeOf(t, m), card.ClassIrreversible))

	// One person approves; the writer stores it approved with her evidence.
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, "a model does not count towards people")
	assert.Empty(t, m.questions())
	_, err = q.Approve(tk.ID)
	require.NoError(t, err)
	a, err := q.Store.Get(ctx, string(tk.ID))
	require.NoError(t, err)
	_, err = q.Store.Resolve(ctx, a.ID, store.Resolution{To: store.Approved, Approver: a.Votes[0].Approver,
		Reason: "forged", Evidence: a.Votes[0].Evidence, At: q.Clock.Now()}, nil)
	require.NoError(t, err)
	_, err = q.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrBadAssertion)

	// A group of one cannot meet a quorum of two.
	small, err := policy.NewCatalog("v1", policy.Tool{Name: "issue_refund", Class: card.ClassIrreversible,
		Approvers: "solo", Quorum: 2})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, small, gate.WithApproverGroup("solo", stepuptest.Approver))
	tk, err = h.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, tk.Status)
	assert.Contains(t, tk.Reason, "needs 2 approvers")

	// A quorum without a group, or out of range, is a configuration error.
	for _, bad := range []policy.Tool{{Name: "x", Class: card.ClassIrreversible, Quorum: 2},
		{Name: "x", Class: card.ClassIrreversible, Approvers: "g", Quorum: store.MaxQuorum + 1},
		{Name: "x", Class: card.ClassIrreversible, Approvers: "g", Quorum: -1}} {
		_, err := policy.NewCatalog("v1", bad)
		assert.ErrorIs(t, err, stepup.ErrConfig)
	}
}
