// Package damage checks, for the conformance suite, that a store reads
// back only what it wrote: an audit row changed behind its back is
// [store.ErrCorrupt] on read, at the next append and in its integrity
// check, and from then on the store refuses every deciding call while the
// audit chain and tickets stay readable.
package damage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Tamper replaces the stored audit row r.Seq with r as given, bypassing
// every check of the store: the backend's test hook.
type Tamper func(t *testing.T, s store.Store, r audit.Record)

// world is a store with one record of each kind a deciding call needs,
// and a chain of several records.
type world struct {
	s                          store.Store
	pending, approved, running store.Approval
	chain                      []audit.Record
}

func build(t *testing.T, newStore func(*testing.T) store.Store) world {
	s := newStore(t)
	ctx := t.Context()
	w := world{s: s}
	at := fixture.Now(t, s)
	var err error
	w.pending, _, err = s.Park(ctx, fixture.TicketAt("s1", "u1", 1, at), store.Caps{}, fixture.Note("park"))
	require.NoError(t, err)
	w.approved = fixture.ParkApproved(t, s, 2)
	w.running = fixture.ParkExecuting(t, s, 3, "gate-1", at.Add(-time.Second))
	require.NoError(t, s.PutCredential(ctx, fixture.Credential("cred-1", "u1", 1)))
	require.NoError(t, s.PutGrant(ctx, grantAt("g1", at)))
	require.NoError(t, s.CreateInvite(ctx, inviteAt(1, at)))
	for i := range 3 {
		_, err := s.AppendAudit(ctx, fixture.Record(fmt.Sprintf("task-%d", i), at))
		require.NoError(t, err)
	}
	w.chain = fixture.Chain(t, s)
	require.GreaterOrEqual(t, len(w.chain), 8)
	return w
}

func grantAt(id string, at time.Time) store.Grant {
	g := fixture.Grant(id)
	g.CreatedAt, g.ExpiresAt = at, at.Add(fixture.TTL)
	return g
}

func inviteAt(n byte, at time.Time) store.Invite {
	inv := fixture.Invite(n)
	inv.CreatedAt, inv.ExpiresAt = at, at.Add(fixture.TTL)
	return inv
}

// edited is r with its content changed and its hash left as it was: bit
// rot, or an edit that did not bother with the hash.
func edited(r audit.Record) audit.Record {
	r.Reason += " (edited)"
	return r
}

// rehashed is r with its content changed and a new hash of its own: an
// edit that looks intact alone and breaks the link of the record after.
func rehashed(t *testing.T, r audit.Record) audit.Record {
	r.Reason += " (rewritten)"
	h, err := r.ComputeHash()
	require.NoError(t, err)
	r.Hash = h
	return r
}

// Run runs the damage cases against stores from newStore, damaged through
// tamper.
func Run(t *testing.T, newStore func(*testing.T) store.Store, tamper Tamper) {
	t.Run("EditedRowOnRead", func(t *testing.T) {
		w := build(t, newStore)
		bad := w.chain[3]
		tamper(t, w.s, edited(bad))
		_, err := w.s.AuditSeq(t.Context(), 1, 1<<62)
		require.ErrorIs(t, err, store.ErrCorrupt, "a row that does not match its hash is refused on read")
		assert.Contains(t, err.Error(), fmt.Sprintf("seq %d", bad.Seq), "the error names the seq")
		_, err = w.s.AuditByTask(t.Context(), bad.Task)
		assert.ErrorIs(t, err, store.ErrCorrupt, "every read checks its rows")
		refusesToDecide(t, w)
	})
	t.Run("RewrittenRowOnRead", func(t *testing.T) {
		w := build(t, newStore)
		bad := w.chain[3]
		tamper(t, w.s, rehashed(t, bad))
		alone, err := w.s.AuditSeq(t.Context(), uint64(bad.Seq), uint64(bad.Seq+1))
		require.NoError(t, err, "a rewritten row read alone has nothing to link to")
		require.Len(t, alone, 1)
		_, err = w.s.AuditSeq(t.Context(), uint64(bad.Seq), uint64(bad.Seq+2))
		require.ErrorIs(t, err, store.ErrCorrupt, "the next record no longer links to it")
		assert.Contains(t, err.Error(), fmt.Sprintf("seq %d", bad.Seq+1))
		refusesToDecide(t, w)
	})
	t.Run("EditedHeadOnAppend", func(t *testing.T) {
		w := build(t, newStore)
		tamper(t, w.s, edited(w.chain[len(w.chain)-1]))
		_, err := w.s.AppendAudit(t.Context(), fixture.Record("after", fixture.Now(t, w.s)))
		require.ErrorIs(t, err, store.ErrCorrupt, "an append never links to a damaged head")
		refusesToDecide(t, w)
	})
	// A head rewritten with a new hash of its own is self-consistent and
	// links to the record before it: no store can tell it from inside;
	// the gate's rollback mark, kept outside the store, holds the head's
	// hash.
	t.Run("EditedHeadOnDecision", func(t *testing.T) {
		w := build(t, newStore)
		tamper(t, w.s, edited(w.chain[len(w.chain)-1]))
		_, err := w.s.Resolve(t.Context(), w.pending.ID, fixture.Approve(fixture.Now(t, w.s)), fixture.Note("approve"))
		require.ErrorIs(t, err, store.ErrCorrupt, "a decision never links to a damaged head")
		got, err := w.s.Get(t.Context(), w.pending.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, got.State, "the refused decision wrote nothing")
		refusesToDecide(t, w)
	})
	t.Run("Check", func(t *testing.T) {
		w := build(t, newStore)
		c, ok := w.s.(store.Checker)
		if !ok {
			t.Skip("the backend does not implement store.Checker")
		}
		r, err := c.Check(t.Context())
		require.NoError(t, err)
		assert.False(t, r.Damaged(), "an intact store checks intact: %v", r.Problems)
		assert.Equal(t, int64(len(w.chain)), r.Records)
		assert.Equal(t, w.chain[len(w.chain)-1].Seq, r.HeadSeq)
		assert.Equal(t, int64(3), r.Tickets)
		_, _, err = w.s.Park(t.Context(), fixture.TicketAt("s1", "u1", 9, fixture.Now(t, w.s)), store.Caps{}, fixture.Note("park"))
		require.NoError(t, err, "an intact check leaves the store deciding")

		bad := w.chain[2]
		tamper(t, w.s, edited(bad))
		r, err = c.Check(t.Context())
		require.NoError(t, err)
		require.True(t, r.Damaged())
		found := false
		for _, p := range r.Problems {
			found = found || p.Table == "audit" && p.FromSeq <= bad.Seq && bad.Seq <= p.ToSeq
		}
		assert.True(t, found, "the report names seq %d: %+v", bad.Seq, r.Problems)
		assert.Contains(t, r.Summary(), fmt.Sprintf("seq %d", bad.Seq))
		refusesToDecide(t, w)
	})
}

// refusesToDecide checks that every deciding call of w's store fails with
// ErrCorrupt and changes nothing, while the chain's head and the tickets
// stay readable.
func refusesToDecide(t *testing.T, w world) {
	t.Helper()
	s, ctx := w.s, t.Context()
	at := fixture.Now(t, s)
	headSeq := w.chain[len(w.chain)-1].Seq
	if head, err := s.AuditHead(ctx); err == nil {
		headSeq = head.Seq // a record appended before the damage was found
	} else {
		require.ErrorIs(t, err, store.ErrCorrupt, "only a damaged head is unreadable")
	}
	calls := map[string]func(context.Context) error{
		"Park": func(ctx context.Context) error {
			_, _, err := s.Park(ctx, fixture.TicketAt("s2", "u2", 50, at), store.Caps{}, fixture.Note("park"))
			return err
		},
		"ParkUnnoted": func(ctx context.Context) error {
			_, _, err := s.Park(ctx, fixture.TicketAt("s2", "u2", 51, at), store.Caps{}, nil)
			return err
		},
		"Resolve": func(ctx context.Context) error {
			_, err := s.Resolve(ctx, w.pending.ID, fixture.Approve(at), fixture.Note("approve"))
			return err
		},
		"Revoke": func(ctx context.Context) error {
			_, err := s.Resolve(ctx, w.approved.ID, store.Resolution{To: store.Revoked, Reason: "x", At: at}, fixture.Note("revoke"))
			return err
		},
		"Vote": func(ctx context.Context) error {
			_, err := s.Vote(ctx, w.pending.ID, fixture.Vote("bob", at), 2, "quorum", fixture.Note("cosign"))
			return err
		},
		"ExpirePending": func(ctx context.Context) error {
			_, err := s.ExpirePending(ctx, at.Add(time.Hour), fixture.Note("expire"))
			return err
		},
		"Consume": func(ctx context.Context) error {
			_, err := s.Consume(ctx, w.approved.ID, fixture.Claim("k", "gate-1", at), fixture.Note("consume"))
			return err
		},
		"Finish": func(ctx context.Context) error {
			_, err := s.Finish(ctx, w.running.ID, w.running.Fence, fixture.Done(at), fixture.Note("finish"))
			return err
		},
		"Reclaim": func(ctx context.Context) error {
			_, err := s.Reclaim(ctx, w.running.ID, w.running.Fence, fixture.Claim("", "gate-2", at), fixture.Note("reclaim"))
			return err
		},
		"AppendAudit": func(ctx context.Context) error {
			_, err := s.AppendAudit(ctx, fixture.Record("refused", at))
			return err
		},
		"PutGrant": func(ctx context.Context) error { return s.PutGrant(ctx, grantAt("g2", at)) },
		"UseGrant": func(ctx context.Context) error {
			_, err := s.UseGrant(ctx, "g1", at)
			return err
		},
		"RevokeGrant": func(ctx context.Context) error { return s.RevokeGrant(ctx, "g1", at, fixture.Note("revoke")) },
		"ParkGranted": func(ctx context.Context) error {
			a := fixture.TicketAt("s3", "u1", 60, at)
			a.State, a.Approver = store.Approved, "grant:g1"
			_, _, err := s.ParkGranted(ctx, a, "g1", fixture.Note("granted"))
			return err
		},
		"PutCredential": func(ctx context.Context) error {
			return s.PutCredential(ctx, fixture.Credential("cred-2", "u1", 0))
		},
		"AdvanceSignCount": func(ctx context.Context) error { return s.AdvanceSignCount(ctx, []byte("cred-1"), 9) },
		"RevokeCredential": func(ctx context.Context) error {
			return s.RevokeCredential(ctx, []byte("cred-1"), at, fixture.Note("revoke"))
		},
		"CreateInvite": func(ctx context.Context) error { return s.CreateInvite(ctx, inviteAt(2, at)) },
		"RedeemInvite": func(ctx context.Context) error {
			_, err := s.RedeemInvite(ctx, inviteAt(1, at).TokenHash, at)
			return err
		},
		"RevokeInvite": func(ctx context.Context) error {
			return s.RevokeInvite(ctx, inviteAt(1, at).TokenHash, at, fixture.Note("revoke"))
		},
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(ctx), store.ErrCorrupt, "%s refuses on a damaged store", name)
	}
	after, err := s.AuditSeq(ctx, uint64(headSeq+1), 1<<62)
	require.NoError(t, err)
	assert.Empty(t, after, "no refused call appended a row")
	for _, a := range []store.Approval{w.pending, w.approved, w.running} {
		got, err := s.Get(ctx, a.ID)
		require.NoError(t, err, "tickets stay readable")
		assert.Equal(t, a.State, got.State, "no refused call changed a ticket")
	}
	g, err := s.GetGrant(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, 3, g.Remaining, "no refused call used a grant")
	_, err = s.GetGrant(ctx, "g2")
	assert.ErrorIs(t, err, store.ErrNotFound, "no refused call stored a grant")
}
