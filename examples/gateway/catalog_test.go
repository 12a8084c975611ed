package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/remote"
)

const exampleCatalog = "../service/catalog.json"

// withoutExecutors writes the example catalog, less its executor blocks,
// to a temporary file: the demo executor runs its tools.
func withoutExecutors(t *testing.T) string {
	t.Helper()
	c, err := catalog.ParseFile(exampleCatalog, nil)
	require.NoError(t, err)
	for i := range c.Tools {
		c.Tools[i].Executor = nil
	}
	raw, err := catalog.Marshal(c.Version, c.Tools, c.Groups)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "catalog.json")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	return path
}

// TestGatewayCatalog: -catalog FILE decides with the file's policy and
// approver groups, and the version is printed at start.
func TestGatewayCatalog(t *testing.T) {
	path := withoutExecutors(t)
	p := startGateway(t, options{catalog: path, db: filepath.Join(t.TempDir(), "asu.db"), approver: "user:dana"})
	assert.Contains(t, p.printed(), "policy:        2026-12-02.1 (its own version; "+path+", 3 tools, 2 approver groups)")
	assert.Contains(t, p.printed(), "demo executor")
	client, err := remote.NewClient(p.AgentURL, p.Token, nil)
	require.NoError(t, err)
	ctx := context.Background()
	propose := func(tool, args string) stepup.Ticket {
		tk, err := client.Propose(ctx, stepup.Call{Tool: tool, Args: json.RawMessage(args), Task: "t-1", Session: "s-1",
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		return tk
	}
	assert.Equal(t, stepup.StatusAllowed, propose("lookup_order", `{"order":"A-17"}`).Status)
	assert.Equal(t, stepup.StatusDenied, propose("issue_refund", `{"order":"A-17","amount":900}`).Status)
	// A rule-of-two tool waits: the catalog's admins group exists in the
	// gate (a group the gate did not know would deny it).
	tk := propose("delete_customer", `{"customer":"c-1042"}`)
	assert.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	assert.Equal(t, stepup.StatusDenied, propose("send_email", `{"to":"a@example.com"}`).Status, "the seed tools are not this catalog's")
}

// TestGatewayCatalogSeed: without -catalog the seed catalog decides, and
// says so.
func TestGatewayCatalogSeed(t *testing.T) {
	p := startGateway(t, options{db: filepath.Join(t.TempDir(), "asu.db")})
	assert.Contains(t, p.printed(), "policy:        ")
	assert.Contains(t, p.printed(), "the reference program's catalog; -catalog FILE decides with yours")
}

// TestGatewayCatalogRefused: a catalog the gateway cannot serve stops it
// at start with the file's own error, and a tool with an executor block
// but no secret to sign its requests with is refused by name.
func TestGatewayCatalogRefused(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n\"tools\": [{\"name\": \"a\", \"class\": \"harmless\"}]\n}"), 0o600))
	for _, tc := range []struct{ catalog, want string }{
		{bad, bad + ":2:"},
		{exampleCatalog, `tool delete_customer is run over HTTP (its executor block or -tool-url): give -tool-secret-file FILE`},
		{filepath.Join(t.TempDir(), "missing.json"), "cannot open"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), &out, options{agentAddr: "127.0.0.1:0", siteAddr: "127.0.0.1:0",
			db: filepath.Join(t.TempDir(), "asu.db"), catalog: tc.catalog, log: &bytes.Buffer{}}, nil)
		require.Error(t, err, tc.catalog)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestExecutorsFromCatalog: every executor block becomes an HTTP tool
// with its URL, timeout and retries, in tool order.
func TestExecutorsFromCatalog(t *testing.T) {
	got := executorsFromCatalog(map[string]catalog.Executor{
		"wire_money": {URL: "https://b.test/", Timeout: 2 * time.Second, Retries: 3},
		"send_email": {URL: "https://mail.internal/send"},
	})
	assert.Equal(t, []HTTPTool{{Tool: "send_email", URL: "https://mail.internal/send"},
		{Tool: "wire_money", URL: "https://b.test/", Timeout: 2 * time.Second, Retries: 3}}, got)
}

// TestCatalogFlag: the flag reaches the options.
func TestCatalogFlag(t *testing.T) {
	var o options
	require.NoError(t, flags(&o, &bytes.Buffer{}).Parse([]string{"-catalog", "team.json"}))
	assert.Equal(t, "team.json", o.catalog)
	assert.True(t, strings.HasSuffix(catalog.DefaultTests(o.catalog), "team.test.json"))
}
