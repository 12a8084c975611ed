package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func TestCatalogDecide(t *testing.T) {
	cat, err := policy.NewCatalog("v7",
		policy.Tool{Name: "read", Class: card.ClassRead},
		policy.Tool{Name: "notify", Class: card.ClassExternal, Unattended: true,
			Limits: []policy.Limit{policy.AllowDomains("to", "example.com")}},
		policy.Tool{Name: "refund", Class: card.ClassIrreversible,
			Schema: json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"}}}`),
			Limits: []policy.Limit{policy.MaxAmount("amount", "500")}},
	)
	require.NoError(t, err)
	tests := []struct {
		name    string
		tool    string
		args    string
		taint   []string
		verdict plug.Verdict
		reason  string
	}{
		{"unknown tool", "run_shell", `{}`, nil, plug.Deny, "unknown tool"},
		{"read allowed", "read", `{}`, nil, plug.Allow, ""},
		{"read allowed after taint", "read", `{}`, []string{"read web page"}, plug.Allow, ""},
		{"unattended external allowed", "notify", `{"to":"ops@example.com"}`, nil, plug.Allow, ""},
		{"external needs approval after taint", "notify", `{"to":"ops@example.com"}`, []string{"read web page https://example.org"}, plug.NeedsApproval, ""},
		{"recipient off the allowlist", "notify", `{"to":"ops@exarnple.com"}`, nil, plug.Deny, "recipient domain not on the allowlist"},
		{"schema violation", "refund", `{"amount":"lots"}`, nil, plug.Deny, "arguments do not match the tool's schema"},
		{"missing required", "refund", `{}`, nil, plug.Deny, "arguments do not match the tool's schema"},
		{"over the limit", "refund", `{"amount":900}`, nil, plug.Deny, "over the per-call limit"},
		{"irreversible needs approval", "refund", `{"amount":120}`, nil, plug.NeedsApproval, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := cat.Decide(context.Background(), plug.Proposal{Tool: tt.tool, Args: json.RawMessage(tt.args), Taint: tt.taint})
			require.NoError(t, err)
			assert.Equal(t, tt.verdict, d.Verdict)
			assert.Equal(t, "v7", d.PolicyVersion)
			if tt.reason != "" {
				assert.Equal(t, tt.reason, d.Reason)
			}
		})
	}
}

func TestNewCatalogRefusesBadEntries(t *testing.T) {
	tests := []struct {
		name  string
		tools []policy.Tool
	}{
		{"no name", []policy.Tool{{Class: card.ClassRead}}},
		{"unknown class", []policy.Tool{{Name: "x", Class: "harmless"}}},
		{"twice", []policy.Tool{{Name: "x", Class: card.ClassRead}, {Name: "x", Class: card.ClassRead}}},
		{"the gate's own name", []policy.Tool{{Name: plug.GrantTool, Class: card.ClassRead}}},
		{"schema not JSON", []policy.Tool{{Name: "x", Class: card.ClassRead, Schema: json.RawMessage(`{`)}}},
		{"schema with remote ref", []policy.Tool{{Name: "x", Class: card.ClassRead,
			Schema: json.RawMessage(`{"$ref":"https://example.com/s.json"}`)}}},
		{"escalate nowhere", []policy.Tool{{Name: "x", Class: card.ClassExternal,
			Timeout: plug.Timeout{Outcome: plug.OutcomeEscalate}}}},
		{"unknown alternative", []policy.Tool{{Name: "x", Class: card.ClassExternal,
			Timeout: plug.Timeout{Outcome: plug.OutcomeAlternative, Alternative: "y"}}}},
		{"unsafe alternative", []policy.Tool{{Name: "x", Class: card.ClassExternal,
			Timeout: plug.Timeout{Outcome: plug.OutcomeAlternative, Alternative: "y"}},
			{Name: "y", Class: card.ClassIrreversible}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.NewCatalog("v1", tt.tools...)
			assert.ErrorIs(t, err, stepup.ErrConfig)
		})
	}
	_, err := policy.NewCatalog("")
	assert.ErrorIs(t, err, stepup.ErrConfig)
}

type failingPolicy struct{}

func (failingPolicy) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	return plug.Decision{Verdict: plug.Allow, PolicyVersion: "v1"}, errors.New("rules unavailable")
}

type versionlessPolicy struct{}

func (versionlessPolicy) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	return plug.Decision{Verdict: plug.Allow}, nil
}

func TestProposeFailsClosed(t *testing.T) {
	ctx := context.Background()
	call := stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`), Session: "s", Principal: agentFor("user:dana")}
	tests := []struct {
		name   string
		policy plug.Policy
		call   func(stepup.Call) stepup.Call
		reason string
	}{
		{"policy error", failingPolicy{}, nil, "policy could not decide"},
		{"policy without version", versionlessPolicy{}, nil, "policy gave no version"},
		{"args not an object", nil, func(c stepup.Call) stepup.Call { c.Args = []byte(`[1]`); return c }, "arguments must be"},
		{"args with duplicate keys", nil, func(c stepup.Call) stepup.Call { c.Args = []byte(`{"to":"a","to":"b"}`); return c }, "arguments must be"},
		{"args with inexact number", nil, func(c stepup.Call) stepup.Call { c.Args = []byte(`{"n":9007199254740993}`); return c }, "arguments must be"},
		{"no session", nil, func(c stepup.Call) stepup.Call { c.Session = ""; return c }, "no session"},
		{"missing attachment", nil, func(c stepup.Call) stepup.Call {
			c.Tool, c.Args = "send_email", []byte(`{"to":"a@example.com","attachment":"gone.csv"}`)
			return c
		}, "could not be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w *world
			if tt.policy != nil {
				w = &world{Harness: stepuptest.NewGate(t, tt.policy), Exec: &recorder{}}
			} else {
				w = newWorld(t)
			}
			c := call
			if tt.call != nil {
				c = tt.call(c)
			}
			tk, err := w.Gate.Propose(ctx, c)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusDenied, tk.Status)
			assert.Contains(t, tk.Reason, tt.reason)
			_, err = w.Gate.Execute(ctx, tk.ID)
			assert.ErrorIs(t, err, stepup.ErrNotFound, "denied calls leave nothing to execute")
		})
	}
}
