package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestRestoreDrillThroughTheCommands restores a backup the backup command
// took while a ticket was approved and not yet run, as an operator
// would, and starts the gateway again: it keeps its watermark beside the
// database, refuses until the reconcile command has held what may have
// run, and the watermark command names the lost run with its key.
func TestRestoreDrillThroughTheCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	o := options{db: db, keyFile: filepath.Join(dir, "gate.key"), tokens: filepath.Join(dir, "tokens.json")}
	p := startGateway(t, o)
	token := p.Token
	require.NotEmpty(t, token)
	assert.Contains(t, p.printed(), "watermark:     "+db+".mark")
	client := func(p *gatewayProc) *remote.Client {
		c, err := remote.NewClient(p.AgentURL, token, nil)
		require.NoError(t, err)
		return c
	}
	propose := func(c *remote.Client, session string) (stepup.Ticket, error) {
		return c.Propose(ctx, stepup.Call{Tool: "write_draft", Args: json.RawMessage(`{"to":"finance@example.com"}`),
			Session: session, Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	}
	tk, err := propose(client(p), "s-1")
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)

	var out bytes.Buffer
	backup := filepath.Join(dir, "backup.db")
	require.NoError(t, cli(ctx, []string{"backup", "-db", db, "-to", backup}, &out, &out), out.String())
	res, err := client(p).Execute(ctx, tk.ID)
	require.NoError(t, err)
	p.stop(t)

	for _, ext := range []string{"-wal", "-shm"} {
		_ = os.Remove(db + ext)
	}
	b, err := os.ReadFile(backup)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(db, b, 0o600))

	p = startGateway(t, o)
	_, err = client(p).Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrRolledBack, "the restored approval does not run again")
	_, err = propose(client(p), "s-2")
	assert.ErrorIs(t, err, stepup.ErrRolledBack)
	out.Reset()
	err = cli(ctx, []string{"reconcile", "-db", db, "-key-file", o.keyFile}, &out, &out)
	assert.ErrorContains(t, err, "a running gateway holds it", "one gateway a watermark file")
	p.stop(t)

	out.Reset()
	require.NoError(t, cli(ctx, []string{"watermark", "-db", db, "-key-file", o.keyFile}, &out, &out), out.String())
	assert.Contains(t, out.String(), "the store is held: the store's")
	assert.Contains(t, out.String(), "ticket "+string(tk.ID)+", idempotency key "+res.IdempotencyKey)
	out.Reset()
	require.NoError(t, cli(ctx, []string{"reconcile", "-db", db, "-key-file", o.keyFile, "-by", "operator:erin"}, &out, &out), out.String())
	assert.Contains(t, out.String(), "held: ticket "+string(tk.ID)+" (write_draft, was approved, which had run)")
	assert.Contains(t, out.String(), "reconciled by operator:erin: 1 tickets held")

	p = startGateway(t, o)
	_, err = client(p).Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrRevoked, "held, never run again")
	tk2, err := propose(client(p), "s-3")
	require.NoError(t, err)
	_, err = client(p).Execute(ctx, tk2.ID)
	assert.NoError(t, err, "the gateway decides and runs again")

	out.Reset()
	p.stop(t)
	require.NoError(t, cli(ctx, []string{"reconcile", "-db", db, "-key-file", o.keyFile}, &out, &out))
	assert.True(t, strings.HasPrefix(out.String(), "the store is not behind its watermark"), out.String())
}
