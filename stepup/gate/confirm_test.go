package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// confirmRecipients are recipients whose registrable domains vary in
// length and letters: short, long, with digits and hyphens, IDNs.
var confirmRecipients = []string{
	"finance@example.com", "a@b.io", "ops@mail.acme-corp.co.uk", "x@xn--bcher-kva.de",
	"pay@m.org", "ceo@1.net", "team@lllooo.com", "q@mm.mm",
}

// rightPick returns the right choice of c for the domain or amount want.
func rightPick(t *testing.T, c gate.Confirmation, want string) gate.Choice {
	t.Helper()
	for _, ch := range c.Choices {
		if ch.Text == want {
			return ch
		}
	}
	t.Fatalf("no choice is %q: %+v", want, c.Choices)
	return gate.Choice{}
}

// summaryKey is what the ticket's card asks to confirm.
func summaryKey(t *testing.T, w *world, id stepup.TicketID) string {
	t.Helper()
	p, err := w.Gate.Desk().Prompt(context.Background(), id)
	require.NoError(t, err)
	s := p.Card.Summary()
	if len(s.Recipients) > 0 {
		return s.Recipients[0].Domain
	}
	return s.Amount
}

// TestConfirmationOffersExactlyOneRightOption: for every recipient, the
// options are four distinct values of which exactly one is the card's
// registrable domain; another replica on the same store offers the same
// options in the same order; and the right one's place differs between
// tickets.
func TestConfirmationOffersExactlyOneRightOption(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("external"), gate.WithoutFloodControlUnsafe())
	other, err := gate.New(w.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(w.Store),
		gate.WithLocalClock(w.Clock.Now), gate.WithConfirmation("external"), gate.WithoutFloodControlUnsafe())
	require.NoError(t, err)
	places := map[int]int{}
	for i := range 48 {
		to := confirmRecipients[i%len(confirmRecipients)]
		call := sendEmail(strings.Replace(to, "@", fmt.Sprintf("+%d@", i), 1))
		call.Session = fmt.Sprintf("sess-%d", i)
		tk, err := w.Gate.Propose(ctx, call)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
		require.NoError(t, err)
		require.Len(t, c.Choices, 4)
		assert.Equal(t, "recipient domain", c.Asks)
		want := summaryKey(t, w, tk.ID)
		right, texts, picks := 0, map[string]bool{}, map[string]bool{}
		for j, ch := range c.Choices {
			texts[ch.Text], picks[ch.Pick] = true, true
			if ch.Text == want {
				right++
				places[j]++
			}
			assert.NotContains(t, ch.Pick, ch.Text, "a pick says nothing of its text")
		}
		assert.Equal(t, 1, right, "exactly one option is the card's: %+v", c.Choices)
		assert.Len(t, texts, 4, "the options are distinct")
		assert.Len(t, picks, 4)
		again, err := other.Desk().Confirmation(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, c, again, "every replica offers the same options")
	}
	assert.Len(t, places, 4, "the right option's place varies: %v", places)
}

// TestConfirmationOfAmounts: a refund confirms its amount, among
// look-alike amounts in the same currency.
func TestConfirmationOfAmounts(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("irreversible"))
	for _, amount := range []string{"0.01", "7", "40", "120", "499.99", "100.5", "300"} {
		call := refund(`{"order":"A-17","amount":` + amount + `}`)
		call.Session = "sess-" + amount
		tk, err := w.Gate.Propose(ctx, call)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, "amount", c.Asks)
		want := summaryKey(t, w, tk.ID)
		require.Contains(t, want, amount)
		rightPick(t, c, want)
		texts := map[string]bool{}
		for _, ch := range c.Choices {
			texts[ch.Text] = true
			assert.Contains(t, ch.Text, `"EUR"`, "look-alikes keep the currency")
		}
		assert.Len(t, texts, 4)
	}
}

// TestConfirmationNeedsNoPickOfOtherClasses: classes not named, and a
// gate without the option, offer no choices and approve as before.
func TestConfirmationNeedsNoPickOfOtherClasses(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("irreversible"))
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	assert.Empty(t, c.Choices)
	got, err := w.Approve(tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// wrongPicks are the picks an attacker or a hasty approver posts, each
// with the approver's valid passkey answer: every look-alike, none, junk,
// the right option's text instead of its pick, a pick made for another
// ticket (even its right one), a right pick bent in case or spacing.
func wrongPicks(t *testing.T, c gate.Confirmation, right gate.Choice, other gate.Confirmation, otherRight gate.Choice) map[string]string {
	t.Helper()
	picks := map[string]string{
		"none": "", "junk": "0123456789abcdef0123456789abcdef", "the text": right.Text,
		"right upper-cased": strings.ToUpper(right.Pick), "right spaced": " " + right.Pick,
		"right cut": right.Pick[:len(right.Pick)-1], "right doubled": right.Pick + right.Pick,
		"other ticket's right": otherRight.Pick,
	}
	for i, ch := range c.Choices {
		if ch.Pick != right.Pick {
			picks[fmt.Sprintf("look-alike %d", i)] = ch.Pick
		}
	}
	for i, ch := range other.Choices {
		picks[fmt.Sprintf("other ticket's option %d", i)] = ch.Pick
	}
	return picks
}

// TestConfirmationWrongPickNeverApproves: posted directly, with the
// approver's own valid answer, no wrong pick approves, and the ticket
// stays pending after each; Approve without a pick is refused; then the
// right pick approves, and replaying it changes nothing.
func TestConfirmationWrongPickNeverApproves(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("external"))
	desk := w.Gate.Desk()
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	ot, err := w.Gate.Propose(ctx, sendEmail("finance@example.org"))
	require.NoError(t, err)
	c, err := desk.Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	oc, err := desk.Confirmation(ctx, ot.ID)
	require.NoError(t, err)
	right := rightPick(t, c, "example.com")
	otherRight := rightPick(t, oc, "example.org")

	answer := assertFor(t, w, w.Authenticator, tk.ID)
	_, err = desk.Approve(ctx, tk.ID, answer)
	require.ErrorIs(t, err, plug.ErrPickNeeded)
	for name, pick := range wrongPicks(t, c, right, oc, otherRight) {
		_, err := desk.ApprovePicked(ctx, tk.ID, pick, answer)
		if pick == "" {
			require.ErrorIs(t, err, plug.ErrPickNeeded, name)
		} else {
			require.ErrorIs(t, err, plug.ErrWrongPick, name)
		}
		got, err := w.Gate.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, got.Status, name)
	}
	got, err := desk.ApprovePicked(ctx, tk.ID, right.Pick, assertFor(t, w, w.Authenticator, tk.ID))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
	_, err = desk.ApprovePicked(ctx, tk.ID, right.Pick, answer)
	require.ErrorIs(t, err, stepup.ErrResolved, "a replayed pick decides nothing twice")
	still, err := w.Gate.Ticket(ctx, ot.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, still.Status, "the other ticket is untouched")
}

// TestConfirmationNaiveGateLetsWrongPickThrough: the same wrong pick and
// answer approve on a gate that does not check picks, so the refusal
// above is the check's doing.
func TestConfirmationNaiveGateLetsWrongPickThrough(t *testing.T) {
	ctx := context.Background()
	checked := newWorld(t, gate.WithConfirmation("external"))
	tk, err := checked.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	c, err := checked.Gate.Desk().Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	var wrong string
	for _, ch := range c.Choices {
		if ch.Text != "example.com" {
			wrong = ch.Pick
		}
	}
	_, err = checked.Gate.Desk().ApprovePicked(ctx, tk.ID, wrong, assertFor(t, checked, checked.Authenticator, tk.ID))
	require.ErrorIs(t, err, plug.ErrWrongPick)

	naive := newWorld(t)
	tk, err = naive.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	got, err := naive.Gate.Desk().ApprovePicked(ctx, tk.ID, wrong, assertFor(t, naive, naive.Authenticator, tk.ID))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status, "without the check the look-alike pick approves")
}

// TestConfirmationWrongPickIsRecordedOnce: a look-alike pick leaves one
// misconfirmed row naming the approver whose answer came with it, however
// often it is posted; junk picks leave none; the figures count the row
// for the class and the approver, and not as a decision.
func TestConfirmationWrongPickIsRecordedOnce(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("external"))
	desk := w.Gate.Desk()
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	c, err := desk.Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	var wrong []string
	for _, ch := range c.Choices {
		if ch.Text != "example.com" {
			wrong = append(wrong, ch.Pick)
		}
	}
	answer := assertFor(t, w, w.Authenticator, tk.ID)
	for range 3 {
		_, err = desk.ApprovePicked(ctx, tk.ID, wrong[0], answer)
		require.ErrorIs(t, err, plug.ErrWrongPick)
		_, err = desk.ApprovePicked(ctx, tk.ID, "junk", answer)
		require.ErrorIs(t, err, plug.ErrWrongPick)
	}
	_, err = desk.ApprovePicked(ctx, tk.ID, wrong[1], []byte(`{"not":"an answer"}`))
	require.ErrorIs(t, err, plug.ErrWrongPick)

	var rows []audit.Record
	for _, r := range rowsOfTicket(t, w.Harness, tk.ID) {
		if r.Decision == audit.DecisionMisconfirmed {
			rows = append(rows, r)
		}
	}
	require.Len(t, rows, 2, "one row per look-alike")
	assert.Equal(t, stepuptest.Approver, rows[0].Approver, "the answer names whose pick it was")
	assert.Empty(t, rows[1].Approver, "an answer that does not verify names no one")
	assert.NotContains(t, rows[0].Reason, "example", "the row names no value")

	all, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-1e12), auditFar)
	require.NoError(t, err)
	rep := figures.Compute(all)
	assert.Equal(t, 2, rep.Overall.WrongPicks)
	assert.Equal(t, 2, rep.ByClass["external"].WrongPicks)
	assert.Equal(t, 1, rep.ByApprover[stepuptest.Approver].WrongPicks)
	assert.Zero(t, rep.Overall.Decided(), "a wrong pick is no decision")
}

// TestConfirmationInvisibleToTheAgent: the ticket the runtime sees names
// none of the options nor their picks.
func TestConfirmationInvisibleToTheAgent(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("external"))
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
	require.NoError(t, err)
	seen, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	raw, err := json.Marshal([]stepup.Ticket{tk, seen})
	require.NoError(t, err)
	for _, ch := range c.Choices {
		assert.NotContains(t, string(raw), ch.Pick)
		if ch.Text != "example.com" {
			assert.NotContains(t, string(raw), ch.Text)
		}
	}
}

func TestWithConfirmationRefusesBadClasses(t *testing.T) {
	for name, opt := range map[string]gate.Option{
		"none": gate.WithConfirmation(), "unknown": gate.WithConfirmation("external", "payments"),
	} {
		_, err := gate.New(stepuptest.NewGate(t, nil).Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(stepuptest.NewGate(t, nil).Store), opt)
		require.ErrorIs(t, err, stepup.ErrConfig, name)
	}
}

// TestConfirmationRefusedAnswerNeverCountsLater: an answer that verified
// but came with a look-alike picked is refused for good, on this gate
// and on another replica of the store: posted again with the right pick
// it approves nothing, though an authenticator without a signature
// counter (as most synced passkeys are) would pass it again. The
// approver signs again and approves. Each look-alike option is tried on
// a ticket of its own.
func TestConfirmationRefusedAnswerNeverCountsLater(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithConfirmation("external"), gate.WithoutFloodControlUnsafe())
	replica, err := gate.New(w.Store, stepuptest.SeedCatalog(), stepuptest.Passkeys(w.Store),
		gate.WithLocalClock(w.Clock.Now), gate.WithConfirmation("external"), gate.WithoutFloodControlUnsafe())
	require.NoError(t, err)
	counterless := stepuptest.WithSignCount(0)
	for i := range 3 {
		tk, err := w.Gate.Propose(ctx, sendEmail(fmt.Sprintf("finance+%d@example.com", i)))
		require.NoError(t, err)
		c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
		require.NoError(t, err)
		right := rightPick(t, c, "example.com")
		var wrong []gate.Choice
		for _, ch := range c.Choices {
			if ch.Pick != right.Pick {
				wrong = append(wrong, ch)
			}
		}
		require.Len(t, wrong, len(c.Choices)-1)
		answer := assertFor(t, w, w.Authenticator, tk.ID, counterless)
		_, err = w.Gate.Desk().ApprovePicked(ctx, tk.ID, wrong[i%len(wrong)].Pick, answer)
		require.ErrorIs(t, err, plug.ErrWrongPick)
		for name, d := range map[string]*gate.Desk{"this gate": w.Gate.Desk(), "a replica": replica.Desk()} {
			_, err = d.ApprovePicked(ctx, tk.ID, right.Pick, answer)
			require.ErrorIs(t, err, stepup.ErrBadAssertion, "%s: the refused answer again, with the right pick", name)
			got, err := w.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, got.Status, name)
		}
		got, err := w.Gate.Desk().ApprovePicked(ctx, tk.ID, right.Pick, assertFor(t, w, w.Authenticator, tk.ID, counterless))
		require.NoError(t, err, "a new answer, signed again")
		assert.Equal(t, stepup.StatusApproved, got.Status)
	}
}
