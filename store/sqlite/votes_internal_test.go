package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestMigrationFromVersion3 opens a file written by schema version 3, which
// knew neither showings nor votes, holding a pending and an approved
// ticket: migration 4 keeps both, neither has been shown or voted on, and
// the pending one then takes a showing and votes up to its quorum.
func TestMigrationFromVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asu.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT`)
	require.NoError(t, err)
	for _, m := range migrations[:3] {
		_, err = db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO schema_version (version) VALUES (3)`)
	require.NoError(t, err)
	for i, state := range []string{"pending", "approved"} {
		a := storetest.TicketAt("s1", "u1", i, t0.Add(-time.Minute))
		approver := ""
		if state == "approved" {
			approver = "alice"
		}
		_, err = db.Exec(`INSERT INTO approvals (id, state, effect, digest, tool, effect_class, card, card_hash,
			nonce, created_at, expires_at, requester, user, session, task, step, policy_version, taint, rationale,
			approver) VALUES (?, ?, ?, ?, 'pay', 'irreversible', NULL, ?, ?, ?, ?, '{}', 'u1', 's1', 't', 's', 'v1',
			'[]', '', ?)`, state, state, a.Effect, a.Digest[:], a.CardHash[:], a.Nonce[:],
			a.CreatedAt.UnixMicro(), a.ExpiresAt.UnixMicro(), approver)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s := openT(t, path, nil)
	ctx := t.Context()
	for _, id := range []string{"pending", "approved"} {
		a, err := s.Get(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, store.State(id), a.State, "the data stays")
		assert.True(t, a.ShownAt.IsZero(), "%s: not shown", id)
		assert.Nil(t, a.Votes, "%s: no votes", id)
	}
	a, err := s.Show(ctx, "pending", t0)
	require.NoError(t, err)
	assert.True(t, t0.Equal(a.ShownAt))
	_, err = s.Vote(ctx, "approved", store.Vote{Approver: "bob", At: t0}, 2, "ok", nil)
	assert.ErrorIs(t, err, store.ErrResolved)
	_, err = s.Vote(ctx, "pending", store.Vote{Approver: "bob", Evidence: []byte("e1"), At: t0}, 2, "ok", nil)
	require.NoError(t, err)
	a, err = s.Vote(ctx, "pending", store.Vote{Approver: "carol", At: t0}, 2, "ok", nil)
	require.NoError(t, err)
	assert.Equal(t, store.Approved, a.State)
	assert.Equal(t, "carol", a.Approver)
	assert.Equal(t, []store.Vote{{Approver: "bob", Evidence: []byte("e1"), At: t0}, {Approver: "carol", At: t0}}, a.Votes)
	var v int
	require.NoError(t, s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v))
	assert.Equal(t, len(migrations), v)
}

// TestVotesColumnDamaged checks that a votes column that is not the JSON
// Vote wrote makes the ticket unreadable rather than read with a wrong
// tally.
func TestVotesColumnDamaged(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
	a, _, err := s.Park(t.Context(), storetest.TicketAt("s1", "u1", 1, t0), store.Caps{}, nil)
	require.NoError(t, err)
	_, err = s.db.Exec(`UPDATE approvals SET votes = '{"not":"a list"' WHERE id = ?`, a.ID)
	require.NoError(t, err)
	_, err = s.Get(t.Context(), a.ID)
	require.Error(t, err)
	assert.NotErrorIs(t, err, store.ErrNotFound)
	_, err = s.Vote(t.Context(), a.ID, store.Vote{Approver: "bob", At: t0}, 2, "ok", nil)
	require.Error(t, err, "no vote is added to a tally that cannot be read")
}
