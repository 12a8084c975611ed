package postgres

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// TestAuditHashInDatabase: asu_audit_hash, the record's hash built in SQL
// that every append checks its head with, is ComputeHash for records
// generated to be awkward (escapes, control characters, non-ASCII text,
// nil and empty lists, arguments), so a store never refuses its own
// rows; and a row changed in any one column no longer hashes to its hash.
func TestAuditHashInDatabase(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(5, 6))
	control := []string{"\x01", "\x1f", "\x7f", "\b\f\r", `\u0000`, "\u2029", "\U0010FFFF", `"\\"`}
	appended := 0
	for i, r := range cutRecords(rng, 400, false) {
		r.Reason += control[i%len(control)]
		r.Taint = append(r.Taint, control[rng.IntN(len(control))])
		if _, err := store.ChainNext(audit.Record{}, r, t0()); err != nil {
			continue // arguments canon refuses are never chained
		}
		_, err := s.AppendAudit(ctx, r)
		require.NoError(t, err, "record %d: the next append checks it", i)
		appended++
	}
	require.Greater(t, appended, 200)
	rows, err := s.pool.Query(ctx, `SELECT seq, asu_audit_hash(a), hash FROM audit a ORDER BY seq`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var (
			seq       int64
			got, want []byte
		)
		require.NoError(t, rows.Scan(&seq, &got, &want))
		assert.Equal(t, want, got, "seq %d", seq)
		n++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, appended, n)
	chain, err := s.AuditSeq(ctx, 1, 1000)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyChain(chain, canon.Digest{}))

	for _, col := range []string{"time = time + 1", "ticket_id = ticket_id || 'x'", "task = task || 'x'",
		"args_digest = sha256(args_digest)", "principal_delegations = array_append(principal_delegations, 'x')",
		"taint = '{}'", "decision_millis = decision_millis + 1", "prev_hash = sha256(prev_hash)", "nonce = nonce || '0'"} {
		var changed bool
		tx, err := s.pool.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, `UPDATE audit SET `+col+` WHERE seq = 7`)
		require.NoError(t, err, col)
		require.NoError(t, tx.QueryRow(ctx, `SELECT asu_audit_hash(a) <> a.hash FROM audit a WHERE seq = 7`).Scan(&changed))
		assert.True(t, changed, "a row with %s no longer hashes to its hash", col)
		require.NoError(t, tx.Rollback(ctx))
	}
	_, err = s.AppendAudit(ctx, cutRecords(rng, 1, false)[0])
	require.NoError(t, err, "the rolled-back edits left the chain intact")
}
