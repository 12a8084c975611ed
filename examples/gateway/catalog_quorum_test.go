package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestGatewayCatalogQuorum: a rule-of-two tool of the catalog file needs
// two members of its group, each with their own passkey; one approval
// does not run it, the second does, once.
func TestGatewayCatalogQuorum(t *testing.T) {
	db := filepath.Join(t.TempDir(), "asu.db")
	p := startGateway(t, options{catalog: withoutExecutors(t), db: db, approver: "user:ann"})
	ann := p.enroll(t)
	var out bytes.Buffer
	require.NoError(t, cli(context.Background(), []string{"invite", "-db", db, "-origin", p.Origin, "-user", "user:bob"}, &out, &out))
	link := regexp.MustCompile(`http\S+`).FindString(out.String())
	require.NotEmpty(t, link, out.String())
	bob := enrollLink(t, p.Origin, link)

	client, err := remote.NewClient(p.AgentURL, p.Token, nil)
	require.NoError(t, err)
	ctx := context.Background()
	tk, err := client.Propose(ctx, stepup.Call{Tool: "delete_customer", Args: json.RawMessage(`{"customer":"c-1042"}`),
		Task: "t-1", Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)

	approve(t, p.Origin, ann, tk.ID)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	got, _ := client.Wait(short, tk.ID)
	cancel()
	assert.NotEqual(t, stepup.StatusApproved, got.Status, "one of two approvals")
	_, err = client.Execute(ctx, tk.ID)
	require.Error(t, err, "one of two approvals runs nothing")

	approve(t, p.Origin, bob, tk.ID)
	got, err = client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	_, err = client.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.Regexp(t, `executed delete_customer digest \S+ key \S+`, p.printed())
	assert.Len(t, regexp.MustCompile(`executed delete_customer`).FindAllString(p.printed(), -1), 1)
}
