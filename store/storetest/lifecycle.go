package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// calls exercises every method of s once with ctx and returns the errors
// by method name. Mutating calls target the ticket, credential, grant and
// invite made by seed.
func calls(ctx context.Context, s store.Store, ids seeded) map[string]error {
	errs := map[string]error{}
	e := func(name string, err error) { errs[name] = err }
	_, _, err := s.Park(ctx, Ticket("s9", "u9", 9), store.Caps{})
	e("Park", err)
	_, err = s.Get(ctx, ids.pending)
	e("Get", err)
	_, err = s.Resolve(ctx, ids.pending, approve(t0))
	e("Resolve", err)
	_, err = s.ExpirePending(ctx, t0.Add(ttl))
	e("ExpirePending", err)
	_, err = s.Pending(ctx, store.Filter{})
	e("Pending", err)
	_, err = s.Consume(ctx, ids.approved, "key", t0)
	e("Consume", err)
	_, err = s.Finish(ctx, ids.executing, nil, t0)
	e("Finish", err)
	_, err = s.Recover(ctx)
	e("Recover", err)
	e("PutCredential", s.PutCredential(ctx, credential("cred-9", "u9", 0)))
	_, err = s.GetCredential(ctx, []byte("cred-1"))
	e("GetCredential", err)
	_, err = s.CredentialsByUser(ctx, "u1")
	e("CredentialsByUser", err)
	e("AdvanceSignCount", s.AdvanceSignCount(ctx, []byte("cred-1"), 100))
	e("CreateInvite", s.CreateInvite(ctx, invite(9)))
	_, err = s.RedeemInvite(ctx, invite(1).TokenHash, t0)
	e("RedeemInvite", err)
	_, err = s.GetInvite(ctx, invite(1).TokenHash)
	e("GetInvite", err)
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
	_, err = s.AuditRange(ctx, t0, t0.Add(ttl))
	e("AuditRange", err)
	_, err = s.AuditByTask(ctx, "task-1")
	e("AuditByTask", err)
	e("PutGrant", s.PutGrant(ctx, grant("g9")))
	_, err = s.GetGrant(ctx, "g1")
	e("GetGrant", err)
	_, err = s.UseGrant(ctx, "g1", t0)
	e("UseGrant", err)
	return errs
}

// seeded names the records seed made.
type seeded struct{ pending, approved, executing string }

// seed puts one record of every kind in s.
func seed(t *testing.T, s store.Store) seeded {
	t.Helper()
	ctx := context.Background()
	p, _, err := s.Park(ctx, Ticket("s1", "u1", 1), store.Caps{})
	require.NoError(t, err)
	a := parkApproved(t, s, 2)
	x := parkApproved(t, s, 3)
	_, err = s.Consume(ctx, x.ID, "key-x", t0.Add(2*ttl/3))
	require.NoError(t, err)
	require.NoError(t, s.PutCredential(ctx, credential("cred-1", "u1", 1)))
	require.NoError(t, s.CreateInvite(ctx, invite(1)))
	require.NoError(t, s.PutGrant(ctx, grant("g1")))
	_, err = s.AppendAudit(ctx, Record("task-1", t0))
	require.NoError(t, err)
	_, err = s.AddCount(ctx, "k", t0, 1)
	require.NoError(t, err)
	return seeded{pending: p.ID, approved: a.ID, executing: x.ID}
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
	for _, id := range []string{ids.pending, ids.approved, ids.executing} {
		a, err := s.Get(ctx, id)
		require.NoError(t, err)
		snap["ticket "+id] = normalize(a)
	}
	p, err := s.Pending(ctx, store.Filter{})
	require.NoError(t, err)
	snap["pending"] = len(p)
	c, err := s.CredentialsByUser(ctx, "u1")
	require.NoError(t, err)
	snap["credentials"] = len(c)
	cred, err := s.GetCredential(ctx, []byte("cred-1"))
	require.NoError(t, err)
	snap["sign count"] = cred.SignCount
	g, err := s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	snap["grant remaining"] = g.Remaining
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
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, err := range calls(ctx, s, ids) {
		assert.ErrorIs(t, err, context.Canceled, name)
	}
	assert.Equal(t, before, snapshot(t, s, ids), "a cancelled context changes nothing")
	_, err := s.Consume(context.Background(), ids.approved, "key", t0)
	assert.NoError(t, err, "the store still works after cancelled calls")
}
