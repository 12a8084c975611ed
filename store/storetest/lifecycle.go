package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
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
	_, _, err = s.Park(ctx, TicketAt("s9", "u9", 9, at), store.Caps{}, note("park"))
	e("Park", err)
	_, err = s.Get(ctx, ids.pending)
	e("Get", err)
	_, err = s.Show(ctx, ids.pending, at)
	e("Show", err)
	_, err = s.Vote(ctx, ids.pending, vote("bob", at), 2, "two", note("vote"))
	e("Vote", err)
	_, err = s.Resolve(ctx, ids.pending, approve(at), note("approve"))
	e("Resolve", err)
	_, _, err = s.List(ctx, store.Filter{})
	e("List", err)
	_, err = s.ExpirePending(ctx, at.Add(ttl), note("expire"))
	e("ExpirePending", err)
	_, err = s.Consume(ctx, ids.approved, claim("key", "gate-1", at), note("consume"))
	e("Consume", err)
	e("Renew", s.Renew(ctx, ids.executing, "gate-1", 1, at.Add(time.Hour)))
	_, err = s.Finish(ctx, ids.executing, 1, done(at), note("finish"))
	e("Finish", err)
	_, err = s.Expired(ctx, at, 0)
	e("Expired", err)
	_, err = s.Reclaim(ctx, ids.lapsed, 1, claim("", "gate-2", at), note("reclaim"))
	e("Reclaim", err)
	e("PutCredential", s.PutCredential(ctx, credential("cred-9", "u9", 0)))
	_, err = s.GetCredential(ctx, []byte("cred-1"))
	e("GetCredential", err)
	_, err = s.CredentialsByUser(ctx, "u1")
	e("CredentialsByUser", err)
	e("AdvanceSignCount", s.AdvanceSignCount(ctx, []byte("cred-1"), 100))
	e("RevokeCredential", s.RevokeCredential(ctx, []byte("cred-1"), at, note("revoke")))
	e("CreateInvite", s.CreateInvite(ctx, invite(9)))
	_, err = s.RedeemInvite(ctx, invite(1).TokenHash, t0)
	e("RedeemInvite", err)
	_, err = s.GetInvite(ctx, invite(1).TokenHash)
	e("GetInvite", err)
	e("RevokeInvite", s.RevokeInvite(ctx, invite(2).TokenHash, at, note("revoke")))
	_, err = s.AddCount(ctx, "k", t0, 1)
	e("AddCount", err)
	_, err = s.IncrStreak(ctx, "k", t0)
	e("IncrStreak", err)
	e("ResetStreak", s.ResetStreak(ctx, "k"))
	_, err = s.GetStreak(ctx, "k")
	e("GetStreak", err)
	_, err = s.AppendAudit(ctx, Record("task-9", t0))
	e("AppendAudit", err)
	_, err = s.AuditHead(ctx)
	e("AuditHead", err)
	_, err = s.AuditRange(ctx, t0, at.Add(ttl))
	e("AuditRange", err)
	_, err = s.AuditSeq(ctx, 1, 100)
	e("AuditSeq", err)
	_, err = s.AuditByTask(ctx, "task-1")
	e("AuditByTask", err)
	e("PutGrant", s.PutGrant(ctx, grant("g9")))
	_, err = s.GetGrant(ctx, "g1")
	e("GetGrant", err)
	_, err = s.UseGrant(ctx, "g1", at)
	e("UseGrant", err)
	e("RevokeGrant", s.RevokeGrant(ctx, "g2", at, note("revoke")))
	granted := TicketAt("s8", "u8", 8, at)
	granted.State, granted.Approver = store.Approved, "grant:g1"
	_, _, err = s.ParkGranted(ctx, granted, "g1", note("grant"))
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
	at := now(t, s)
	p, _, err := s.Park(ctx, TicketAt("s1", "u1", 1, at), store.Caps{}, note("park"))
	require.NoError(t, err)
	a := parkApproved(t, s, 2)
	x := parkExecuting(t, s, 3, "gate-1", at.Add(lease))
	l := parkExecuting(t, s, 4, "gate-1", at.Add(-time.Second))
	require.NoError(t, s.PutCredential(ctx, credential("cred-1", "u1", 1)))
	require.NoError(t, s.CreateInvite(ctx, invite(1)))
	require.NoError(t, s.CreateInvite(ctx, invite(2)))
	for _, id := range []string{"g1", "g2"} {
		g := grant(id)
		g.CreatedAt, g.ExpiresAt = at, at.Add(ttl)
		require.NoError(t, s.PutGrant(ctx, g))
	}
	_, err = s.AppendAudit(ctx, Record("task-1", t0))
	require.NoError(t, err)
	_, err = s.AddCount(ctx, "k", t0, 1)
	require.NoError(t, err)
	return seeded{pending: p.ID, approved: a.ID, executing: x.ID, lapsed: l.ID, at: at}
}

func invite(n byte) store.Invite {
	return store.Invite{TokenHash: [32]byte{n}, User: "u1", CreatedAt: t0, ExpiresAt: t0.Add(ttl)}
}

func grant(id string) store.Grant {
	return store.Grant{ID: id, User: "u1", Spec: []byte(`{}`), Remaining: 3, CreatedAt: t0, ExpiresAt: t0.Add(ttl)}
}

// snapshot reads everything seed made, with a background context.
func snapshot(t *testing.T, s store.Store, ids seeded) map[string]any {
	t.Helper()
	ctx := context.Background()
	snap := map[string]any{}
	for _, id := range []string{ids.pending, ids.approved, ids.executing, ids.lapsed} {
		a, err := s.Get(ctx, id)
		require.NoError(t, err)
		snap["ticket "+id] = normalize(a)
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
		inv, err := s.GetInvite(ctx, invite(n).TokenHash)
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
	n, err := s.AddCount(ctx, "k", t0, 0)
	require.NoError(t, err)
	snap["count"] = n
	st, err := s.GetStreak(ctx, "k")
	require.NoError(t, err)
	snap["streak"] = st.Count
	return snap
}

func testClosed(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ids := seed(t, s)
	require.NoError(t, s.Close())
	assert.NoError(t, s.Close(), "closing twice is fine")
	for name, err := range calls(context.Background(), s, ids) {
		assert.ErrorIs(t, err, store.ErrClosed, name)
	}
}

func testCancelled(t *testing.T, newStore func(*testing.T) store.Store) {
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
