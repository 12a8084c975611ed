package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// TestAllowedReadKeepsItsAuditRows: with the gate's records in memory
// (the default, which made allowed calls cheap), an allowed read still
// leaves the audit row of its decision and of its run, in a chain that
// verifies.
func TestAllowedReadKeepsItsAuditRows(t *testing.T) {
	cs, _, r, stop := start(t, defaults())
	defer stop()
	ctx := context.Background()
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}})
		require.NoError(t, err)
		require.False(t, res.IsError, resultText(res))
	}
	rows, err := r.store.AuditRange(ctx, time.Unix(0, 0), time.Now().Add(time.Hour))
	require.NoError(t, err)
	decisions := map[string]int{}
	for _, row := range rows {
		if row.Tool == "read_file" {
			decisions[row.Decision]++
		}
	}
	assert.Equal(t, 3, decisions[audit.DecisionAllow], "%v", decisions)
	assert.Equal(t, 3, decisions[audit.DecisionExecuted], "%v", decisions)
	assert.NoError(t, audit.VerifyChain(rows, canon.Digest{}))
}

// TestRunWithDB: -db keeps the gate's records in an SQLite file, which
// outlives the gateway: the audit rows of a read made in one run are
// there for the next.
func TestRunWithDB(t *testing.T) {
	o := defaults()
	o.db = filepath.Join(t.TempDir(), "asu.db")
	cs, _, _, stop := start(t, o)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "q3.csv"}})
	require.NoError(t, err)
	require.False(t, res.IsError, resultText(res))
	stop()

	_, _, r, stop := start(t, o)
	defer stop()
	rows, err := r.store.AuditRange(context.Background(), time.Unix(0, 0), time.Now().Add(time.Hour))
	require.NoError(t, err)
	n := 0
	for _, row := range rows {
		if row.Tool == "read_file" && row.Decision == audit.DecisionAllow {
			n++
		}
	}
	assert.Equal(t, 1, n)
}
