package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestQuorumReceiptCountsStandingVotes: Erin approves a rule-of-two
// refund and then loses her passkey; Dana and Finn approve it. The quorum
// receipt names the policy's quorum, two, and the two approvals that
// count, never Erin's; once Finn's passkey is revoked too, the ticket is
// pending again and makes no receipt.
func TestQuorumReceiptCountsStandingVotes(t *testing.T) {
	ctx := context.Background()
	q := newQuorumDesk(t)
	tk, err := q.Gate.Propose(ctx, refundCall())
	require.NoError(t, err)
	got, err := stepuptest.Approve(ctx, q.Gate.Desk(), q.erin, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, got.Status)
	q.Clock.Advance(time.Second)
	require.NoError(t, q.Enrollment.RevokeCredential(ctx, q.erin.CredentialIDs()[0], "user:ops", "lost"))
	_, err = q.Approve(tk.ID)
	require.NoError(t, err)
	got, err = stepuptest.Approve(ctx, q.Gate.Desk(), q.finn, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)

	qr, err := q.Gate.Desk().QuorumReceipt(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, qr.Needed, "the policy's quorum, not the votes the ticket holds")
	var names []string
	for _, r := range qr.Receipts {
		names = append(names, r.Approver.User)
	}
	assert.Equal(t, []string{stepuptest.Approver, "user:finn"}, names)
	assert.Equal(t, receipt.QuorumFormatV1, qr.Format)
	one, err := q.Gate.Desk().Receipt(ctx, tk.ID)
	require.NoError(t, err)
	assert.NotEqual(t, "user:erin", one.Approver.User)

	require.NoError(t, q.Enrollment.RevokeCredential(ctx, q.finn.CredentialIDs()[0], "user:ops", "lost"))
	_, err = q.Gate.Desk().QuorumReceipt(ctx, tk.ID)
	assert.ErrorIs(t, err, plug.ErrNoReceipt, "one approval that counts is no quorum")
	_, err = q.Gate.Desk().Receipt(ctx, tk.ID)
	assert.ErrorIs(t, err, plug.ErrNoReceipt)
}
