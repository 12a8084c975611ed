package gate_test

import (
	"context"
	"github.com/agentstepup/asu/stepup/plug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestProgressOfARuleOfTwo: after Dana's approval of a refund that needs
// two of finance, her prompt, Erin's prompt and Erin's queue entry all
// say 1 of 2, name Dana and wait for one more of finance; Dana again is
// told she already approved (its own sentinel, still a not-permitted);
// once Erin approves, the progress reads 2 of 2 and awaits nobody.
func TestProgressOfARuleOfTwo(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t)
	desk := q.Gate.Desk()
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)

	p, err := desk.Prompt(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, p.Progress.Needed)
	assert.Empty(t, p.Progress.Signed)
	assert.Equal(t, "0 of 2 approved; waiting for two more of finance", p.Progress.Sentence())

	q.Clock.Advance(time.Second)
	got, err := q.Approve(tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, got.Status)

	const want = "1 of 2 approved by user:dana; waiting for one more of finance"
	p, err = desk.Prompt(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, want, p.Progress.Sentence())
	require.Len(t, p.Progress.Signed, 1)
	assert.Equal(t, stepuptest.Approver, p.Progress.Signed[0].Approver)
	assert.Equal(t, stepuptest.Start().Add(time.Second), p.Progress.Signed[0].At)
	assert.Equal(t, []string{"user:erin", "user:finn"}, p.Progress.Awaited)
	assert.Equal(t, 1, p.Progress.Remaining())
	erins, err := desk.Queue(ctx, "user:erin", 0)
	require.NoError(t, err)
	require.Len(t, erins, 1)
	assert.Equal(t, want, erins[0].Progress.Sentence())
	byID, err := desk.Progress(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, want, byID.Sentence())

	_, err = q.Approve(tk.ID)
	assert.ErrorIs(t, err, plug.ErrAlreadyApproved, "Dana twice")
	assert.ErrorIs(t, err, stepup.ErrNotPermitted, "still a not-permitted for callers that tell only that apart")

	got, err = stepuptest.Approve(ctx, desk, q.erin, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	done, err := desk.Progress(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, "2 of 2 approved by user:dana, user:erin", done.Sentence())
	assert.Empty(t, done.Awaited)
}

// TestProgressOfOnePerson: a ticket one person decides says nothing until
// it is approved, then names who approved it.
func TestProgressOfOnePerson(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	p, err := w.Gate.Desk().Progress(ctx, tk.ID)
	require.NoError(t, err)
	assert.Empty(t, p.Sentence())
	assert.Equal(t, []string{stepuptest.Approver}, p.Awaited)
	_, err = w.Approve(tk.ID)
	require.NoError(t, err)
	p, err = w.Gate.Desk().Progress(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, "1 of 1 approved by user:dana", p.Sentence())
}

// TestRefusalsOfAVerifiedAnswerAreToldApart: a passkey that verified but
// may not decide is refused with the sentinel of its cause: not an
// approver of the ticket; revoked.
func TestRefusalsOfAVerifiedAnswerAreToldApart(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t)
	gus := q.Enroll(t, "user:gus") // enrolled, in no group
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	_, err = stepuptest.Approve(ctx, q.Gate.Desk(), gus, tk.ID, stepuptest.WithCredential(gus.CredentialIDs()[0]))
	assert.ErrorIs(t, err, plug.ErrNotYours)
	assert.ErrorIs(t, err, stepup.ErrNotPermitted)

	require.NoError(t, q.Enrollment.RevokeCredential(ctx, q.erin.CredentialIDs()[0], "user:ops", "lost"))
	_, err = stepuptest.Approve(ctx, q.Gate.Desk(), q.erin, tk.ID, stepuptest.WithCredential(q.erin.CredentialIDs()[0]))
	assert.ErrorIs(t, err, plug.ErrPasskeyRevoked)
	assert.ErrorIs(t, err, stepup.ErrRevoked)
}
