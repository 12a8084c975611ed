package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestVigilanceFlagsRefuseBadInput: each bad -practice, -confirm,
// -second-person or -catch-floor is refused with the flag and the fix.
func TestVigilanceFlagsRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-practice", "finance"}, `-practice "finance": want GROUP=N`},
		{[]string{"-practice", "finance=0"}, `-practice "finance=0": N is a whole number`},
		{[]string{"-practice", "finance=x"}, `-practice "finance=x": N is a whole number`},
		{[]string{"-practice", "finance=5", "-practice", "finance=9"}, `group "finance" has two rates`},
		{[]string{"-confirm", "irreversible,money"}, `-confirm "irreversible,money": "money" is not an effect class`},
		{[]string{"-second-person", "irreversible"}, "-second-person irreversible: give -practice too"},
		{[]string{"-practice", "=5", "-second-person", "read,"}, `"" is not an effect class`},
		{[]string{"-practice", "=5", "-catch-floor", "1.5"}, "-catch-floor 1.5: a rate in (0, 1]"},
		{[]string{"-practice", "=5", "-catch-floor", "-0.1"}, "-catch-floor -0.1: a rate in (0, 1]"},
	} {
		var o options
		fs := flags(&o, io.Discard)
		require.NoError(t, fs.Parse(tc.args), tc.args)
		_, err := o.svc.vig.options()
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
	var o options
	fs := flags(&o, io.Discard)
	require.NoError(t, fs.Parse([]string{"-practice", "finance=50", "-practice", "=20", "-confirm", "external, irreversible",
		"-second-person", "irreversible", "-catch-floor", "0.6"}))
	opts, err := o.svc.vig.options()
	require.NoError(t, err)
	assert.Len(t, opts, 4)
}

// TestVigilanceFlagsReachTheGate: a service started with -confirm shows
// the approver the key-value pick on the approval page, and with
// -practice places practice copies (the approver's inbox count grows by
// one per real request, while the agent sees only its own).
func TestVigilanceFlagsReachTheGate(t *testing.T) {
	var o options
	fs := flags(&o, io.Discard)
	require.NoError(t, fs.Parse([]string{"-confirm", "external"}))
	o.db, o.dwell, o.agentAddr, o.siteAddr = filepath.Join(t.TempDir(), "asu.db"), 0, "127.0.0.1:0", "127.0.0.1:0"
	g := startGateway(t, o)
	g.enroll(t)
	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	tk, err := client.Propose(context.Background(), stepup.Call{Tool: "send_email", Session: "s",
		Args:      json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	page := get(t, g.Origin+"/approve/"+string(tk.ID))
	assert.Contains(t, page, `name="asu-pick"`, "the pick is on the page")
	assert.Equal(t, 4, strings.Count(page, `name="asu-pick"`), "one right value among four")

	o = options{}
	fs = flags(&o, io.Discard)
	require.NoError(t, fs.Parse([]string{"-practice", "=1"}))
	o.db, o.dwell, o.agentAddr, o.siteAddr = filepath.Join(t.TempDir(), "asu.db"), 0, "127.0.0.1:0", "127.0.0.1:0"
	g = startGateway(t, o)
	client, err = remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	tk, err = client.Propose(context.Background(), stepup.Call{Tool: "send_email", Session: "s",
		Args:      json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	// The copy is placed after the agent has its answer: read until it is.
	var out string
	require.Eventually(t, func() bool {
		out, err = adminRun(t, "tickets", "-db", o.db)
		return err == nil && strings.Contains(out, "tickets: 2 pending,approved")
	}, time.Minute, 20*time.Millisecond, "the request and its practice copy wait:\n%s", out)
}
