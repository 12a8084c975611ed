package postgres_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// TestMigrateFromVersion3 upgrades a schema a previous build wrote (the
// migrations up to 003, which knew neither showings nor votes) holding a
// pending and an approved ticket: migration 004 keeps both, neither has
// been shown or voted on, and the pending one then takes a showing and
// votes up to its quorum.
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	c := conn(t, "public")
	_, err := c.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	_, err = c.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	_, err = c.Exec(ctx, `CREATE TABLE schema_version (version integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`)
	require.NoError(t, err)
	for v, name := range []string{"001_initial.sql", "002_leases_revocation.sql", "003_credential_seal.sql"} {
		body, err := os.ReadFile(filepath.Join("migrations", name))
		require.NoError(t, err)
		_, err = c.Exec(ctx, string(body))
		require.NoError(t, err, name)
		_, err = c.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, v+1)
		require.NoError(t, err)
	}
	created := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	for i, state := range []string{"pending", "approved"} {
		a := storetest.TicketAt("s1", "u1", i, created)
		approver := ""
		if state == "approved" {
			approver = "alice"
		}
		_, err := c.Exec(ctx, `INSERT INTO tickets (id, state, effect, digest, tool, effect_class, card, card_hash,
			nonce, created_at, expires_at, requester_user, requester_agent, user_name, session, task, step,
			policy_version, rationale, approver)
			VALUES ($1, $2, $3, $4, 'pay', 'irreversible', $5, $6, $7, $8, $9, 'u1', 'agent-1', 'u1', 's1',
			'task-1', 'step', 'v1', 'why', $10)`,
			state, state, a.Effect, a.Digest[:], a.Card, a.CardHash[:], a.Nonce[:], a.CreatedAt, a.ExpiresAt, approver)
		require.NoError(t, err, state)
	}

	s := open(t, schema) // migrates
	assert.Equal(t, migrationCount(t), query(t, schema, `SELECT max(version) FROM schema_version`))
	for _, id := range []string{"pending", "approved"} {
		a, err := s.Get(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, store.State(id), a.State, "the data stays")
		assert.True(t, a.ShownAt.IsZero(), "%s: not shown", id)
		assert.Nil(t, a.Votes, "%s: no votes", id)
	}
	now := dbNow(t, s)
	a, err := s.Show(ctx, "pending", now)
	require.NoError(t, err)
	assert.True(t, now.Equal(a.ShownAt))
	_, err = s.Vote(ctx, "approved", store.Vote{Approver: "bob", At: now}, 2, "ok", note("vote"))
	assert.ErrorIs(t, err, store.ErrResolved)
	_, err = s.Vote(ctx, "pending", store.Vote{Approver: "bob", Evidence: []byte("e1"), At: now}, 2, "ok", note("vote"))
	require.NoError(t, err)
	a, err = s.Vote(ctx, "pending", store.Vote{Approver: "carol", At: now}, 2, "ok", note("vote"))
	require.NoError(t, err)
	assert.Equal(t, store.Approved, a.State)
	assert.Equal(t, "carol", a.Approver)
	assert.Equal(t, []store.Vote{{Approver: "bob", Evidence: []byte("e1"), At: now}, {Approver: "carol", At: now}}, a.Votes)
}

// TestVotesColumn checks what the schema keeps out of the votes column
// whoever writes it, and that a value the store did not write makes the
// ticket unreadable, as damage, rather than read with a wrong tally.
func TestVotesColumn(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := open(t, schema)
	a, _, err := s.Park(ctx, storetest.TicketAt("s1", "u1", 1, dbNow(t, s)), store.Caps{}, nil)
	require.NoError(t, err)
	c := conn(t, schema)
	_, err = c.Exec(ctx, `UPDATE tickets SET votes = '{"approver":"bob"}' WHERE id = $1`, a.ID)
	assert.Error(t, err, "votes are a JSON array")
	_, err = c.Exec(ctx, `UPDATE tickets SET votes = '[{"approver":17}]' WHERE id = $1`, a.ID)
	require.NoError(t, err)
	_, err = s.Get(ctx, a.ID)
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), a.ID, "the error names the ticket")
	_, err = s.Vote(ctx, a.ID, store.Vote{Approver: "bob", At: dbNow(t, s)}, 2, "ok", nil)
	assert.Error(t, err, "no vote is added to a tally that cannot be read")
}

// TestVotesAcrossReplicas races votes on one ticket from several replicas,
// each with its own pool: every replica votes as its own approvers and as
// approvers every replica shares. The database serializes the votes: each
// approver counts once, the ticket is approved once, at its quorum.
func TestVotesAcrossReplicas(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	reps := replicas(t, schema, 4)
	const quorum = store.MaxQuorum
	pending, _, err := reps[0].Park(t.Context(), storetest.TicketAt("s1", "u1", 1, dbNow(t, reps[0])), store.Caps{}, nil)
	require.NoError(t, err)
	short, _, err := reps[0].Park(t.Context(), storetest.TicketAt("s1", "u1", 2, dbNow(t, reps[0])), store.Caps{}, nil)
	require.NoError(t, err)
	// Racer i of replica r votes as "own-r-i" (distinct) and as "shared-i"
	// (the same name on every replica): 4*4 + 4 = 20 distinct approvers
	// for a quorum of 16, and, on the short ticket, 4 shared approvers for
	// a quorum of 5.
	errs := race(reps, 4, func(s *postgres.Store, r, i int) error {
		at := clockOf(s)
		for _, who := range []string{fmt.Sprintf("own-%d-%d", r, i), fmt.Sprintf("shared-%d", i)} {
			if _, err := s.Vote(t.Context(), pending.ID, store.Vote{Approver: who, At: at}, quorum, "quorum", note("vote")); err != nil &&
				!errorsIs(err, store.ErrDuplicate, store.ErrResolved) {
				return err
			}
		}
		_, err := s.Vote(t.Context(), short.ID, store.Vote{Approver: fmt.Sprintf("shared-%d", i), At: at}, 5, "quorum", note("vote"))
		return err
	})
	winners(t, errs, store.ErrDuplicate)
	got, err := reps[1].Get(t.Context(), pending.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Approved, got.State)
	require.Len(t, got.Votes, quorum, "approved exactly at the quorum")
	assert.Equal(t, got.Votes[quorum-1].Approver, got.Approver)
	seen := map[string]bool{}
	for _, v := range got.Votes {
		assert.False(t, seen[v.Approver], "%s counted twice", v.Approver)
		seen[v.Approver] = true
	}
	got, err = reps[2].Get(t.Context(), short.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Pending, got.State)
	assert.Len(t, got.Votes, 4, "four shared approvers, each counted once")
	assert.Equal(t, quorum+4, query(t, schema, `SELECT count(*) FROM audit WHERE decision = 'vote'`),
		"one row per accepted vote")
}

// errorsIs reports whether err wraps one of targets.
func errorsIs(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
