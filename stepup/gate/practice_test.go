package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// practiceIDs returns the ids in the approver's queue that are not in
// real, after checking each is stored as a practice request.
func practiceIDs(t *testing.T, w *world, real map[stepup.TicketID]bool) []stepup.TicketID {
	t.Helper()
	require.NoError(t, w.Gate.Settle(context.Background()))
	q, err := w.Gate.Desk().Queue(context.Background(), stepuptest.Approver, 1000)
	require.NoError(t, err)
	var out []stepup.TicketID
	for _, e := range q {
		if real[e.Ticket.ID] {
			continue
		}
		a, err := w.Store.Get(context.Background(), string(e.Ticket.ID))
		require.NoError(t, err)
		_, ok := audit.PracticeClass(a.Session)
		require.True(t, ok, "every ticket the agent did not propose is practice: %q", a.Session)
		out = append(out, e.Ticket.ID)
	}
	return out
}

// proposeEmails proposes n distinct e-mails, each from a session of its
// own, and returns their ids.
func proposeEmails(t *testing.T, w *world, n int) map[stepup.TicketID]bool {
	t.Helper()
	real := map[stepup.TicketID]bool{}
	for i := range n {
		call := sendEmail(fmt.Sprintf("finance+%d@example.com", i))
		call.Session = fmt.Sprintf("sess-%d", i)
		tk, err := w.Gate.Propose(context.Background(), call)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		real[tk.ID] = true
	}
	return real
}

// TestPracticeFollowsEveryNthRealRequest: for every rate, a practice
// request follows exactly every oneIn-th real request, in the same
// approver's queue, with a look-alike recipient domain; a gate without
// the option, or with it for another group, places none.
func TestPracticeFollowsEveryNthRealRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []gate.Option
		n    int
		want int
	}{
		{"every one", []gate.Option{gate.WithPractice("", 1)}, 5, 5},
		{"one in two", []gate.Option{gate.WithPractice("", 2)}, 7, 3},
		{"one in three", []gate.Option{gate.WithPractice("", 3)}, 9, 3},
		{"one in fifty", []gate.Option{gate.WithPractice("", 50)}, 49, 0},
		{"another group", []gate.Option{gate.WithPractice("finance", 1)}, 4, 0},
		{"off", nil, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, append(tc.opts, gate.WithoutFloodControlUnsafe())...)
			real := proposeEmails(t, w, tc.n)
			ids := practiceIDs(t, w, real)
			require.Len(t, ids, tc.want)
			for _, id := range ids {
				a, err := w.Store.Get(ctx, string(id))
				require.NoError(t, err)
				assert.Equal(t, audit.PracticeSession+audit.PracticeLookalikeDomain, a.Session)
				p, err := w.Gate.Desk().Prompt(ctx, id)
				require.NoError(t, err, "the practice request renders and verifies like a real one")
				s := p.Card.Summary()
				require.NotEmpty(t, s.Recipients)
				assert.NotEqual(t, "example.com", s.Recipients[0].Domain)
				assert.Equal(t, "exarnple.com", s.Recipients[0].Domain)
			}
		})
	}
}

// TestPracticeOfAnAmountIsTenfold: a refund's practice copy asks for ten
// times the amount, for every spelling of it.
func TestPracticeOfAnAmountIsTenfold(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ amount, want string }{
		{"7", "70"}, {"12", "120"}, {"0.5", "5"}, {"3.25", "32.5"}, {"49.99", "499.9"},
	} {
		w := newWorld(t, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe())
		tk, err := w.Gate.Propose(ctx, refund(`{"order":"A-17","amount":`+tc.amount+`}`))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		ids := practiceIDs(t, w, map[stepup.TicketID]bool{tk.ID: true})
		require.Len(t, ids, 1, tc.amount)
		a, err := w.Store.Get(ctx, string(ids[0]))
		require.NoError(t, err)
		assert.Equal(t, audit.PracticeSession+audit.PracticeAmountTenfold, a.Session)
		p, err := w.Gate.Desk().Prompt(ctx, ids[0])
		require.NoError(t, err)
		assert.Contains(t, p.Card.Summary().Amount, tc.want, tc.amount)
	}
}

// TestPracticeIsUnknownToTheAgent: every runtime method answers a
// practice request's id exactly as an id nobody issued, before and after
// its approver decided it.
func TestPracticeIsUnknownToTheAgent(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe())
	real := proposeEmails(t, w, 1)
	ids := practiceIDs(t, w, real)
	require.Len(t, ids, 1)
	practice, unknown := ids[0], stepup.TicketID(store.NewID())
	probes := map[string]func(stepup.TicketID) error{
		"Wait": func(id stepup.TicketID) error {
			c, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err := w.Gate.Wait(c, id)
			return err
		},
		"Ticket":    func(id stepup.TicketID) error { _, err := w.Gate.Ticket(ctx, id); return err },
		"Requester": func(id stepup.TicketID) error { _, err := w.Gate.Requester(ctx, id); return err },
		"Execute":   func(id stepup.TicketID) error { _, err := w.Gate.Execute(ctx, id); return err },
		"Holds":     func(id stepup.TicketID) error { return w.Gate.Holds(ctx, id) },
		"Runnable":  func(id stepup.TicketID) error { _, err := w.Gate.Runnable(ctx, id); return err },
		"Cancel":    func(id stepup.TicketID) error { _, err := w.Gate.Cancel(ctx, id, "probe"); return err },
	}
	probe := func(when string) {
		for name, call := range probes {
			want, got := call(unknown), call(practice)
			require.ErrorIs(t, want, stepup.ErrNotFound, name)
			require.ErrorIs(t, got, stepup.ErrNotFound, "%s %s", name, when)
			assert.Equal(t, want.Error(), got.Error(), "%s %s", name, when)
		}
	}
	probe("while pending")
	a, err := w.Store.Get(ctx, string(practice))
	require.NoError(t, err)
	require.Equal(t, store.Pending, a.State, "Cancel left the practice request alone")
	_, err = w.Approve(practice)
	require.NoError(t, err)
	probe("once decided")
}

// TestPracticeApprovalIsAMissAndNeverRuns: approving a practice request
// runs nothing, makes no receipt, tells the approver it was practice and
// what gave it away, and is a practice_missed row; denying the next one
// is a practice_caught row.
func TestPracticeApprovalIsAMissAndNeverRuns(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe())
	real := proposeEmails(t, w, 2)
	ids := practiceIDs(t, w, real)
	require.Len(t, ids, 2)

	got, err := w.Approve(ids[0])
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusDenied, got.Status)
	assert.Contains(t, got.Reason, "practice request missed")
	assert.Contains(t, got.Reason, `"exarnple.com" is a look-alike`)
	assert.Zero(t, w.Exec.Count(), "nothing ran")
	_, err = w.Gate.Desk().Receipt(ctx, ids[0])
	require.ErrorIs(t, err, plug.ErrNoReceipt)
	rows := auditOf(t, w, ids[0])
	require.NotEmpty(t, rows)
	last := rows[len(rows)-1]
	assert.Equal(t, audit.DecisionPracticeMissed, last.Decision)
	assert.Equal(t, stepuptest.Approver, last.Approver)

	got, err = w.Deny(ids[1], "looks wrong")
	require.NoError(t, err)
	assert.Contains(t, got.Reason, "practice request caught")
	rows = auditOf(t, w, ids[1])
	assert.Equal(t, audit.DecisionPracticeCaught, rows[len(rows)-1].Decision)
	for id := range real {
		a, err := w.Store.Get(ctx, string(id))
		require.NoError(t, err)
		assert.Equal(t, store.Pending, a.State, "the real requests are untouched")
	}
}

// TestPracticeAnswerNeverApprovesARealTicket: the approver's answer to a
// practice request, posted for the real request it copied (or any other
// real ticket), is refused; and it does not verify under the challenge a
// real ticket with the practice request's columns would have, so no
// receipt can be made of it, while the naive variant (no tag of its own)
// would verify.
func TestPracticeAnswerNeverApprovesARealTicket(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe())
	real := proposeEmails(t, w, 1)
	ids := practiceIDs(t, w, real)
	require.Len(t, ids, 1)
	p, err := w.Gate.Desk().Prompt(ctx, ids[0])
	require.NoError(t, err)
	answer, err := w.Authenticator.Assert(p.Options)
	require.NoError(t, err)
	for id := range real {
		_, err := w.Gate.Desk().Approve(ctx, id, answer)
		require.Error(t, err, "a practice answer approves no real ticket")
		a, err := w.Store.Get(ctx, string(id))
		require.NoError(t, err)
		assert.Equal(t, store.Pending, a.State)
	}

	a, err := w.Store.Get(ctx, string(ids[0]))
	require.NoError(t, err)
	approver := stepuptest.Passkeys(w.Store)
	untagged := plug.Request{Ticket: ids[0], Action: plug.ActionApprove, Digest: a.Digest, Nonce: a.Nonce,
		ExpiresAt: a.ExpiresAt, CardHash: a.CardHash, Approvers: []string{stepuptest.Approver},
		Challenge: receipt.Challenge(a.Digest, a.Nonce, a.ExpiresAt.Unix(), a.CardHash)}
	_, err = approver.Verify(ctx, untagged, answer)
	require.Error(t, err, "the practice answer is no real approval of its own effect")
	naive := untagged
	naive.Challenge = p.Challenge
	_, err = approver.Verify(ctx, naive, answer)
	require.NoError(t, err, "under its own tag it verifies: the test would catch a missing tag")
	assert.NotEqual(t, untagged.Challenge, p.Challenge)
	assert.NotEqual(t, receipt.DenyChallenge(untagged.Challenge), p.DenyChallenge)
}

// TestPracticeSessionIsReserved: a real call naming a practice session
// is refused, for every class and spelling of the prefix.
func TestPracticeSessionIsReserved(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	for _, s := range []string{audit.PracticeSession, audit.PracticeSession + audit.PracticeLookalikeDomain,
		audit.PracticeSession + audit.PracticeAmountTenfold, audit.PracticeSession + "x"} {
		call := sendEmail("finance@example.com")
		call.Session = s
		tk, err := w.Gate.Propose(ctx, call)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusDenied, tk.Status, s)
	}
}

// TestWithPracticeRefusesABadRate: a rate below one is a configuration
// error.
func TestWithPracticeRefusesABadRate(t *testing.T) {
	for _, n := range []int{0, -1, -50} {
		st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
		_, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithPractice("", n))
		require.ErrorIs(t, err, stepup.ErrConfig, n)
	}
}

// TestPracticeLeavesThePendingCapsAlone: an agent that fills its user's
// and its session's pending caps is refused after exactly as many real
// requests with practice requests on as with them off, for every cap and
// practice rate: practice requests wait for the same people, but never
// take a real request's place under a cap (else counting the admitted
// requests would tell an agent that practice exists).
func TestPracticeLeavesThePendingCapsAlone(t *testing.T) {
	admitted := func(caps store.Caps, sameSession bool, opts ...gate.Option) int {
		w := newWorld(t, append(opts, gate.WithoutFloodControlUnsafe(), gate.WithPendingCaps(caps))...)
		for i := range 3 * (caps.PerUser + caps.PerSession + 1) {
			call := sendEmail(fmt.Sprintf("finance+%d@example.com", i))
			if !sameSession {
				call.Session = fmt.Sprintf("sess-%d", i)
			}
			tk, err := w.Gate.Propose(context.Background(), call)
			require.NoError(t, err)
			if tk.Status != stepup.StatusPending {
				return i
			}
		}
		return -1
	}
	for _, caps := range []store.Caps{{PerUser: 1}, {PerUser: 2}, {PerUser: 5}, {PerUser: 8},
		{PerSession: 1}, {PerSession: 3}, {PerSession: 4, PerUser: 6}} {
		for _, same := range []bool{false, true} {
			want := admitted(caps, same)
			require.NotZero(t, want, "%+v", caps) // -1: never refused (session caps, each call a session of its own)
			for _, n := range []int{1, 2, 3} {
				assert.Equal(t, want, admitted(caps, same, gate.WithPractice("", n)),
					"caps %+v, one session %v, practice 1 in %d", caps, same, n)
			}
		}
	}
}

// heldPractice is the seed catalog, holding its decision on a practice
// copy until release is closed.
type heldPractice struct {
	plug.Policy
	deciding chan struct{}
	release  chan struct{}
}

func (h heldPractice) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	if _, ok := audit.PracticeClass(p.Session); ok {
		select {
		case h.deciding <- struct{}{}:
		default: // told once is enough
		}
		<-h.release
	}
	return h.Policy.Decide(ctx, p)
}

// TestPracticeIsPlacedAfterTheAgentHasItsAnswer: the agent's Propose
// returns while its practice copy is still being made (a policy that holds
// the copy's decision), so the time a call takes says nothing of
// practice; Settle waits for the copy, and then it waits for the
// approver. Made on the agent's path, as a naive gate would, the copy
// would hold the agent's answer and this test would time out.
func TestPracticeIsPlacedAfterTheAgentHasItsAnswer(t *testing.T) {
	ctx := context.Background()
	pol := heldPractice{Policy: stepuptest.SeedCatalog(), deciding: make(chan struct{}, 1), release: make(chan struct{})}
	h := stepuptest.NewGateWith(t, pol, nil, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe())
	answered := make(chan stepup.Ticket, 1)
	go func() {
		tk, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
		assert.NoError(t, err)
		answered <- tk
	}()
	<-pol.deciding // the copy is being made
	var tk stepup.Ticket
	select {
	case tk = <-answered:
	case <-time.After(time.Minute):
		t.Fatal("the agent waited for its practice copy")
	}
	assert.Equal(t, stepup.StatusPending, tk.Status)
	settled := make(chan error, 1)
	go func() { settled <- h.Gate.Settle(ctx) }()
	select {
	case <-settled:
		t.Fatal("Settle returned while the copy was still being made")
	case <-time.After(20 * time.Millisecond):
	}
	close(pol.release)
	require.NoError(t, <-settled)
	q, err := h.Gate.Desk().Queue(ctx, stepuptest.Approver, 10)
	require.NoError(t, err)
	assert.Len(t, q, 2, "the request and its practice copy")
	c, cancel := context.WithCancel(ctx)
	cancel()
	assert.NoError(t, h.Gate.Settle(c), "nothing in flight: Settle returns at once")
}

// TestPracticeBurstKeepsItsRate: a burst of real requests, each due a
// practice copy, while every copy is held in the making, still ends with
// one copy for each: copies beyond the gate's background workers wait
// for one and are never dropped. For every burst size and rate; a gate
// that dropped work past its workers would end with at most
// core.MaxBackground copies.
func TestPracticeBurstKeepsItsRate(t *testing.T) {
	for _, tc := range []struct{ burst, oneIn int }{{40, 1}, {100, 1}, {90, 3}, {64, 2}} {
		t.Run(fmt.Sprintf("%d in 1 in %d", tc.burst, tc.oneIn), func(t *testing.T) {
			pol := heldPractice{Policy: stepuptest.SeedCatalog(), deciding: make(chan struct{}, 1), release: make(chan struct{})}
			h := stepuptest.NewGateWith(t, pol, nil, gate.WithPractice("", tc.oneIn), gate.WithoutFloodControlUnsafe())
			w := &world{Harness: h}
			real := proposeEmails(t, w, tc.burst) // every copy held while the burst is proposed
			close(pol.release)
			ids := practiceIDs(t, w, real)
			assert.Len(t, ids, tc.burst/tc.oneIn, "one copy for every %d real requests", tc.oneIn)
		})
	}
}
