package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestPostgresReplicas: two gateways on one PostgreSQL database, sharing
// the gate key and the tokens file: a call allowed on one executes on the
// other, once. It runs when ASU_POSTGRES_DSN names a database it may
// write to.
func TestPostgresReplicas(t *testing.T) {
	dsn := os.Getenv("ASU_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("ASU_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	dir := t.TempDir()
	o := func(name string) options {
		return options{postgres: dsn, files: dir, keyFile: filepath.Join(dir, "gate.key"),
			tokens: filepath.Join(dir, "tokens.json"), instance: name}
	}
	a := startGateway(t, o("a"))
	b := startGateway(t, o("b"))
	assert.Contains(t, a.printed(), `-postgres "$ASU_POSTGRES_DSN"`)
	assert.NotContains(t, a.printed(), dsn, "the DSN may hold a password")
	ca, err := remote.NewClient(a.AgentURL, a.Token, nil)
	require.NoError(t, err)
	cb, err := remote.NewClient(b.AgentURL, a.Token, nil)
	require.NoError(t, err)
	tk, err := ca.Propose(ctx, readCall("q3.csv"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	_, err = cb.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = ca.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed)
}
