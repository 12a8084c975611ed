package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestRevokeGrantCommand: a grant Dana issued covers her agent's refund
// until revoke-grant, after which the same call waits for a person.
func TestRevokeGrantCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "asu.db")
	g := startGateway(t, options{db: db, approver: "user:dana"})
	dana := g.enroll(t)
	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)

	// Dana asks for a grant on the operator's desk and approves it on the site.
	a := newAdminFlags("test", io.Discard)
	require.NoError(t, a.fs.Parse([]string{"-db", db, "-origin", g.Origin}))
	st, b, err := a.open(ctx)
	require.NoError(t, err)
	defer st.Close()
	tmpl := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "issue_refund", Audience: "issue_refund", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}}
	issue, err := b.gate.Desk().Grant(ctx, "user:dana", gate.GrantSpec{Grant: tmpl, Uses: 5, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	approve(t, g.Origin, dana, issue.ID)

	refund := stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":20}`), Session: "s",
		Grant: string(issue.ID), Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	tk, err := client.Propose(ctx, refund)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, tk.Status, "the grant covers it: %s", tk.Reason)

	out, err := adminRun(t, "revoke-grant", "-db", db, "-grant", string(issue.ID), "-reason", "no longer needed")
	require.NoError(t, err)
	assert.Equal(t, "revoked grant "+string(issue.ID)+": it covers no call from now on\n", out)
	tk, err = client.Propose(ctx, refund)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "after revocation the call waits for a person")
	_, err = adminRun(t, "revoke-grant", "-db", db, "-grant", string(issue.ID))
	assert.ErrorContains(t, err, "already revoked")
}
