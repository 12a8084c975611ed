package gate_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// TestRevokedApprovalsNeverRun: an approval revoked by an operator, by its
// approver with a passkey, or by revoking the passkey that made it, does
// not run; each revocation is an audit row.
func TestRevokedApprovalsNeverRun(t *testing.T) {
	ctx := context.Background()
	revocations := map[string]func(t *testing.T, w *world, id stepup.TicketID) error{
		"by an operator": func(t *testing.T, w *world, id stepup.TicketID) error {
			_, err := w.Gate.Admin().RevokeTicket(ctx, id, "user:ops", "sent by mistake")
			return err
		},
		"by its approver": func(t *testing.T, w *world, id stepup.TicketID) error {
			p, err := w.Gate.Desk().RevokePrompt(ctx, id)
			require.NoError(t, err)
			answer, err := w.Authenticator.Assert(p.DenyOptions)
			require.NoError(t, err)
			_, err = w.Gate.Desk().Revoke(ctx, id, answer, "changed my mind")
			return err
		},
		"by revoking the passkey": func(t *testing.T, w *world, id stepup.TicketID) error {
			return w.Enrollment.RevokeCredential(ctx, w.Authenticator.CredentialIDs()[0], "user:ops", "lost phone")
		},
	}
	for name, revoke := range revocations {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			tk := approved(t, w, sendEmail("finance@example.com"))
			w.Clock.Advance(1) // revoked after the approval
			require.NoError(t, revoke(t, w, tk.ID))
			_, err := w.Gate.Execute(ctx, tk.ID)
			require.Error(t, err)
			assert.True(t, errorsIsAny(err, stepup.ErrRevoked, stepup.ErrBadAssertion), err)
			assert.Zero(t, w.Exec.Count(), "nothing ran")
			rows, err := w.Store.AuditRange(ctx, stepuptest.Start(), stepupFar)
			require.NoError(t, err)
			var revoked int
			for _, r := range rows {
				if r.Decision == audit.DecisionRevoked {
					revoked++
				}
			}
			assert.Equal(t, 1, revoked, "the revocation is an audit row")
		})
	}
}

// TestRevokedPasskeyNeverApprovesAgain: after its passkey is revoked, an
// approver's answers are refused.
func TestRevokedPasskeyNeverApprovesAgain(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	require.NoError(t, w.Enrollment.RevokeCredential(ctx, w.Authenticator.CredentialIDs()[0], "user:ops", ""))
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Approve(tk.ID, stepuptest.WithCredential(w.Authenticator.CredentialIDs()[0]))
	require.Error(t, err)
	got, err := w.Gate.Ticket(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status)
}

// TestRevokedGrantCoversNothing: a revoked grant's calls go to a person.
func TestRevokedGrantCoversNothing(t *testing.T) {
	ctx := context.Background()
	w := newGrantWorld(t, refundTemplate(), 5)
	c := refund(`{"order":"A-17","amount":80}`)
	tk, _ := w.propose(t, c)
	require.Equal(t, stepup.StatusApproved, tk.Status, "covered before the revocation")
	require.NoError(t, w.Gate.Admin().RevokeGrant(ctx, w.grant, "user:ops", "no more refunds"))
	c.Step = "2"
	tk, row := w.propose(t, c)
	assert.Equal(t, stepup.StatusPending, tk.Status)
	assert.Contains(t, row.Reason, "grant not used: revoked")
	rows, err := w.Store.AuditRange(ctx, time.Time{}, stepupFar)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(rows, func(r audit.Record) bool {
		return r.TicketID == w.grant && r.Decision == audit.DecisionRevoked &&
			strings.Contains(r.Reason, "revoked by user:ops")
	}), "the revocation has its audit row")
	require.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
}

// TestRevokeInviteStopsEnrollment: a revoked invite enrolls nothing.
func TestRevokeInviteStopsEnrollment(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	token, err := w.Enrollment.Invite(ctx, "user:erin")
	require.NoError(t, err)
	require.NoError(t, w.Enrollment.RevokeInvite(ctx, token, "user:ops"))
	_, err = w.Enrollment.BeginEnroll(ctx, token)
	assert.Error(t, err)
	rows, err := w.Store.AuditRange(ctx, time.Time{}, stepupFar)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(rows, func(r audit.Record) bool {
		return r.Decision == audit.DecisionRevoked && r.Session == "enrollment:user:erin" &&
			strings.Contains(r.Reason, "revoked by user:ops")
	}), "the invite's revocation has its audit row")
	require.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
}

// TestQueueListsWhatAnApproverMayDecide: each approver's queue holds the
// pending tickets they may decide (their own agents' calls, and those
// routed to their groups), soonest expiry first; never another user's.
func TestQueueListsWhatAnApproverMayDecide(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, refundCatalog(t, "finance"), gate.WithApproverGroup("finance", "user:fin", "user:dana"))
	var refunds []stepup.TicketID
	for i, user := range []string{"user:erin", "user:gus", "user:erin"} {
		tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund",
			Args: json.RawMessage(`{"order":"A-` + string(rune('1'+i)) + `","amount":120}`), Session: "s",
			Principal: agentFor(user)})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		refunds = append(refunds, tk.ID)
		h.Clock.Advance(1)
	}
	for _, who := range []string{"user:fin", "user:dana"} {
		q, err := h.Gate.Desk().Queue(ctx, who, 0)
		require.NoError(t, err)
		var ids []stepup.TicketID
		for _, e := range q {
			ids = append(ids, e.Ticket.ID)
			assert.Equal(t, "finance", e.Approvers)
		}
		assert.Equal(t, refunds, ids, who)
	}
	q, err := h.Gate.Desk().Queue(ctx, "user:erin", 0)
	require.NoError(t, err)
	assert.Empty(t, q, "a requester's own calls routed to a group are the group's to decide")
	_, err = h.Gate.Desk().Queue(ctx, "agent:reports", 0)
	assert.ErrorIs(t, err, stepup.ErrNotPermitted)

	all, next, err := h.Gate.Admin().List(ctx, store.Filter{States: []store.State{store.Pending}, Limit: 2})
	require.NoError(t, err)
	assert.Len(t, all, 2)
	assert.NotEmpty(t, next)
	rest, next, err := h.Gate.Admin().List(ctx, store.Filter{States: []store.State{store.Pending}, After: next})
	require.NoError(t, err)
	assert.Len(t, rest, 1)
	assert.Empty(t, next)
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// TestCheckpointSignsTheHead: a signed checkpoint of the head verifies an
// export that starts after it, and a chain whose first records were
// deleted does not verify without one.
func TestCheckpointSignsTheHead(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	_ = approved(t, w, sendEmail("finance@example.com"))
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	cp, err := w.Gate.Admin().Checkpoint(ctx, key)
	require.NoError(t, err)
	_ = approved(t, w, sendEmail("ops@example.com"))
	later, err := w.Store.AuditSeq(ctx, cp.Seq+1, cp.Seq+100)
	require.NoError(t, err)
	require.NotEmpty(t, later)
	assert.NoError(t, audit.VerifyChainFrom(later, pub, cp.Checkpoint, cp.Sig))
	assert.Error(t, audit.VerifyChain(later, canon.Digest{}), "a chain cut at its start needs a checkpoint")
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	forged, err := w.Gate.Admin().Checkpoint(ctx, otherKey)
	require.NoError(t, err)
	assert.Error(t, audit.VerifyChainFrom(later, pub, forged.Checkpoint, forged.Sig))
}

// TestDeskListIsTheApproversOwnView: an approver pages through the tickets
// they may decide or revoke, pending or approved, and never sees a call
// routed to a group they are not in; the pages together hold exactly their
// tickets, whatever the page size.
func TestDeskListIsTheApproversOwnView(t *testing.T) {
	ctx := context.Background()
	h := stepuptest.NewGate(t, refundCatalog(t, "finance"), gate.WithApproverGroup("finance", "user:fin", "user:dana"))
	var finance []stepup.TicketID
	for i, user := range []string{"user:erin", "user:gus", "user:erin", "user:gus"} {
		tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund",
			Args: json.RawMessage(`{"order":"B-` + string(rune('1'+i)) + `","amount":120}`), Session: fmt.Sprint("s-", i),
			Principal: agentFor(user)})
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
		finance = append(finance, tk.ID)
		h.Clock.Advance(1)
	}
	_, err := h.Approve(finance[0]) // dana, a member of finance
	require.NoError(t, err)

	all := func(who string, limit int, states ...store.State) []stepup.TicketID {
		var ids []stepup.TicketID
		f := store.Filter{States: states, Limit: limit}
		for {
			page, next, err := h.Gate.Desk().List(ctx, who, f)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), max(limit, 1))
			for _, e := range page {
				ids = append(ids, e.Ticket.ID)
			}
			if next == "" {
				return ids
			}
			f.After = next
		}
	}
	for _, limit := range []int{1, 2, 3, 100} {
		assert.ElementsMatch(t, finance, all("user:fin", limit), "fin decides the refunds only (limit %d)", limit)
		assert.ElementsMatch(t, finance, all("user:dana", limit), "so does dana, also in finance (limit %d)", limit)
		assert.Empty(t, all("user:erin", limit), "a requester decides none of her calls routed to a group")
	}
	assert.Equal(t, []stepup.TicketID{finance[0]}, all("user:fin", 10, store.Approved), "approved, not yet run: revocable")
	assert.ElementsMatch(t, finance[1:], all("user:fin", 2, store.Pending))
	_, _, err = h.Gate.Desk().List(ctx, "agent:reports", store.Filter{})
	assert.ErrorIs(t, err, stepup.ErrNotPermitted)
}
