// Package interrupt checks, for the conformance suite, a store
// interrupted: closed, every method fails with [store.ErrClosed]; called
// with a cancelled context, every method fails with the context's error,
// changes nothing, and the store works afterwards.
package interrupt

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// calls exercises every method of s once with ctx and returns the errors
// by method name. Mutating calls target the records seed made, with
// arguments that would succeed on an open store and a live context.
func calls(ctx context.Context, s store.Store, ids seeded) map[string]error {
	errs := map[string]error{}
	e := func(name string, err error) { errs[name] = err }
	at := ids.at
	_, err := s.Now(ctx)
	e("Now", err)
	_, _, err = s.Park(ctx, fixture.TicketAt("s9", "u9", 9, at), store.Caps{}, fixture.Note("park"))
	e("Park", err)
	_, err = s.Get(ctx, ids.pending)
	e("Get", err)
	_, err = s.Show(ctx, ids.pending, at)
	e("Show", err)
	_, err = s.Vote(ctx, ids.pending, fixture.Vote("bob", at), 2, "two", fixture.Note("vote"))
	e("Vote", err)
	_, err = s.Resolve(ctx, ids.pending, fixture.Approve(at), fixture.Note("approve"))
	e("Resolve", err)
	_, _, err = s.List(ctx, store.Filter{})
	e("List", err)
	_, err = s.ExpirePending(ctx, at.Add(fixture.TTL), fixture.Note("expire"))
	e("ExpirePending", err)
	_, err = s.Consume(ctx, ids.approved, fixture.Claim("key", "gate-1", at), fixture.Note("consume"))
	e("Consume", err)
	e("Renew", s.Renew(ctx, ids.executing, "gate-1", 1, at.Add(time.Hour)))
	_, err = s.Finish(ctx, ids.executing, 1, fixture.Done(at), fixture.Note("finish"))
	e("Finish", err)
	_, err = s.Expired(ctx, at, 0)
	e("Expired", err)
	_, err = s.Reclaim(ctx, ids.lapsed, 1, fixture.Claim("", "gate-2", at), fixture.Note("reclaim"))
	e("Reclaim", err)
	e("PutCredential", s.PutCredential(ctx, fixture.Credential("cred-9", "u9", 0)))
	_, err = s.GetCredential(ctx, []byte("cred-1"))
	e("GetCredential", err)
	_, err = s.CredentialsByUser(ctx, "u1")
	e("CredentialsByUser", err)
	e("AdvanceSignCount", s.AdvanceSignCount(ctx, []byte("cred-1"), 100))
	e("RevokeCredential", s.RevokeCredential(ctx, []byte("cred-1"), at, fixture.Note("revoke")))
	e("CreateInvite", s.CreateInvite(ctx, fixture.Invite(9)))
	_, err = s.RedeemInvite(ctx, fixture.Invite(1).TokenHash, fixture.T0)
	e("RedeemInvite", err)
	_, err = s.GetInvite(ctx, fixture.Invite(1).TokenHash)
	e("GetInvite", err)
	e("RevokeInvite", s.RevokeInvite(ctx, fixture.Invite(2).TokenHash, at, fixture.Note("revoke")))
	_, err = s.AddCount(ctx, "k", fixture.T0, 1)
	e("AddCount", err)
	_, err = s.IncrStreak(ctx, "k", fixture.T0)
	e("IncrStreak", err)
	e("ResetStreak", s.ResetStreak(ctx, "k"))
	_, err = s.GetStreak(ctx, "k")
	e("GetStreak", err)
	_, err = s.AppendAudit(ctx, fixture.Record("task-9", fixture.T0))
	e("AppendAudit", err)
	_, err = s.AuditHead(ctx)
	e("AuditHead", err)
	_, err = s.AuditRange(ctx, fixture.T0, at.Add(fixture.TTL))
	e("AuditRange", err)
	_, err = s.AuditSeq(ctx, 1, 100)
	e("AuditSeq", err)
	_, err = s.AuditByTask(ctx, "task-1")
	e("AuditByTask", err)
	e("PutGrant", s.PutGrant(ctx, fixture.Grant("g9")))
	_, err = s.GetGrant(ctx, "g1")
	e("GetGrant", err)
	_, err = s.UseGrant(ctx, "g1", at)
	e("UseGrant", err)
	e("RevokeGrant", s.RevokeGrant(ctx, "g2", at, fixture.Note("revoke")))
	granted := fixture.TicketAt("s8", "u8", 8, at)
	granted.State, granted.Approver = store.Approved, "grant:g1"
	_, _, err = s.ParkGranted(ctx, granted, "g1", fixture.Note("grant"))
	e("ParkGranted", err)
	return errs
}

// seeded names the records seed made, and the store's time then.
type seeded struct {
	pending, approved, executing, lapsed string
	at                                   time.Time
}

// seed puts one record of every kind in s.
func seed(t *testing.T, s store.Store) seeded {
	t.Helper()
	ctx := t.Context()
	at := fixture.Now(t, s)
	p, _, err := s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
	require.NoError(t, err)
	a := fixture.ParkApproved(t, s, 2)
	x := fixture.ParkExecuting(t, s, 3, "gate-1", at.Add(fixture.Lease))
	l := fixture.ParkExecuting(t, s, 4, "gate-1", at.Add(-time.Second))
	require.NoError(t, s.PutCredential(ctx, fixture.Credential("cred-1", "u1", 1)))
	require.NoError(t, s.CreateInvite(ctx, fixture.Invite(1)))
	require.NoError(t, s.CreateInvite(ctx, fixture.Invite(2)))
	for _, id := range []string{"g1", "g2"} {
		g := fixture.Grant(id)
		g.CreatedAt, g.ExpiresAt = at, at.Add(fixture.TTL)
		require.NoError(t, s.PutGrant(ctx, g))
	}
	_, err = s.AppendAudit(ctx, fixture.Record("task-1", fixture.T0))
	require.NoError(t, err)
	_, err = s.AddCount(ctx, "k", fixture.T0, 1)
	require.NoError(t, err)
	return seeded{pending: p.ID, approved: a.ID, executing: x.ID, lapsed: l.ID, at: at}
}

// snapshot reads everything seed made, with a background context.
func snapshot(t *testing.T, s store.Store, ids seeded) map[string]any {
	t.Helper()
	ctx := context.Background()
	snap := map[string]any{}
	for _, id := range []string{ids.pending, ids.approved, ids.executing, ids.lapsed} {
		a, err := s.Get(ctx, id)
		require.NoError(t, err)
		snap["ticket "+id] = fixture.Normalize(a)
	}
	p, _, err := s.List(ctx, store.Filter{})
	require.NoError(t, err)
	snap["tickets"] = len(p)
	c, err := s.CredentialsByUser(ctx, "u1")
	require.NoError(t, err)
	snap["credentials"] = len(c)
	cred, err := s.GetCredential(ctx, []byte("cred-1"))
	require.NoError(t, err)
	snap["sign count"] = cred.SignCount
	snap["credential revoked"] = cred.RevokedAt.IsZero()
	for _, n := range []byte{1, 2} {
		inv, err := s.GetInvite(ctx, fixture.Invite(n).TokenHash)
		require.NoError(t, err)
		snap[string(rune('0'+n))+" invite"] = [2]bool{inv.RedeemedAt.IsZero(), inv.RevokedAt.IsZero()}
	}
	for _, id := range []string{"g1", "g2"} {
		g, err := s.GetGrant(ctx, id)
		require.NoError(t, err)
		snap["grant "+id] = [2]any{g.Remaining, g.RevokedAt.IsZero()}
	}
	_, err = s.GetGrant(ctx, "g9")
	snap["grant g9"] = errors.Is(err, store.ErrNotFound)
	h, err := s.AuditHead(ctx)
	require.NoError(t, err)
	snap["audit head"] = h.Seq
	n, err := s.AddCount(ctx, "k", fixture.T0, 0)
	require.NoError(t, err)
	snap["count"] = n
	st, err := s.GetStreak(ctx, "k")
	require.NoError(t, err)
	snap["streak"] = st.Count
	return snap
}

// Closed checks that every method of a closed store fails with
// [store.ErrClosed], and that closing twice is fine.
func Closed(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ids := seed(t, s)
	require.NoError(t, s.Close())
	assert.NoError(t, s.Close(), "closing twice is fine")
	for name, err := range calls(context.Background(), s, ids) {
		assert.ErrorIs(t, err, store.ErrClosed, name)
	}
}

// Cancelled checks that every method fails with the context's error when
// its context is cancelled, changes nothing, and leaves the store working.
func Cancelled(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ids := seed(t, s)
	before := snapshot(t, s, ids)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, err := range calls(ctx, s, ids) {
		assert.ErrorIs(t, err, context.Canceled, name)
	}
	assert.Equal(t, before, snapshot(t, s, ids), "a cancelled context changes nothing")
	for name, err := range calls(t.Context(), s, ids) {
		assert.NoError(t, err, "the store still works after cancelled calls: %s", name)
	}
}
