package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueryPlans checks that merging and the pending caps read an index of
// pending tickets, the lease sweep an index of executing tickets, and a
// page of List the (created_at, id) index, and each source of a queue
// page the pending tickets by user or by group, never the whole table: their
// cost must not grow with the number of tickets.
func TestQueryPlans(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "asu.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	cases := []struct {
		name, query, index string
		args               []any
	}{
		{"merge", queryMerge, "approvals_pending_session", []any{"s", []byte{1}, 0, "u", "{}", "[]", "", "v1", ""}},
		{"expired leases", `SELECT id FROM approvals WHERE state = 'executing' AND lease_until <= ?
			ORDER BY lease_until, id LIMIT ?`, "approvals_executing", []any{0, 100}},
		{"list page", `SELECT id FROM approvals WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
			"approvals_created", []any{0, "", 100}},
		{"session cap", queryCap("session"), "approvals_pending_session", []any{"s", 0, 5}},
		{"user cap", queryCap("user"), "approvals_pending_user", []any{"u", 0, 5}},
		{"queue by user", queryQueue("user", false), "approvals_pending_user", []any{"u", 0, 51}},
		{"queue by user, next page", queryQueue("user", true), "approvals_pending_user", []any{"u", 0, 0, "", 51}},
		{"queue by group", queryQueue("approvers", false), "approvals_pending_group", []any{"group:a", 0, 51}},
		{"queue by group, next page", queryQueue("approvers", true), "approvals_pending_group", []any{"group:a", 0, 0, "", 51}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.reader().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+c.query, c.args...)
			require.NoError(t, err)
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
				plan = append(plan, detail)
			}
			require.NoError(t, rows.Err())
			joined := strings.Join(plan, "; ")
			assert.Regexp(t, "SEARCH approvals USING (COVERING )?INDEX "+c.index+" ", joined)
			assert.NotContains(t, joined, "SCAN approvals", joined)
		})
	}
}
