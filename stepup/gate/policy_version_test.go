package gate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestExecuteDecidesWithTheCurrentPolicy: a ticket decided (approved by a
// person, or allowed by the policy) under one catalog does not run once
// the gate decides with another: a new version, the tool removed, a limit
// lowered, the class raised. Execute refuses with ErrPolicyChanged, which
// tells the runtime to propose again; nothing runs.
func TestExecuteDecidesWithTheCurrentPolicy(t *testing.T) {
	ctx := context.Background()
	key := []byte("one key for every gate of the store.")
	calls := []struct {
		name     string
		call     stepup.Call
		needsYou bool
	}{
		{"approved refund", stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":300}`),
			Session: "s", Principal: agentFor("user:dana")}, true},
		{"approved e-mail", sendEmail("finance@example.com"), true},
		{"allowed read", stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
			Session: "s", Principal: agentFor("user:dana")}, false},
		{"allowed draft", stepup.Call{Tool: "write_draft", Args: json.RawMessage(`{"to":"a@example.com"}`),
			Session: "s", Principal: agentFor("user:dana")}, false},
	}
	edits := []struct {
		name    string
		version string
		edit    func([]policy.Tool) []policy.Tool
	}{
		{"new version, same tools", "2026-12-01.1", func(ts []policy.Tool) []policy.Tool { return ts }},
		{"same version, tool removed", stepuptest.SeedPolicyVersion, func(ts []policy.Tool) []policy.Tool {
			return ts[:0]
		}},
		{"same version, limits lowered", stepuptest.SeedPolicyVersion, func(ts []policy.Tool) []policy.Tool {
			for i := range ts {
				ts[i].Limits = append(ts[i].Limits, policy.MaxAmount("amount", "100"), policy.AllowDomains("to", "example.org"),
					func(args canon.Value) string {
						if _, ok := args.Get("path"); ok {
							return "reads are off"
						}
						return ""
					})
			}
			return ts
		}},
		{"new version, limits lowered", "2026-12-01.2", func(ts []policy.Tool) []policy.Tool {
			for i := range ts {
				ts[i].Limits = append(ts[i].Limits, policy.MaxAmount("amount", "100"))
			}
			return ts
		}},
	}
	for _, c := range calls {
		for _, e := range edits {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				w := newWorld(t, gate.WithKey(key))
				tk, err := w.Gate.Propose(ctx, c.call)
				require.NoError(t, err)
				if c.needsYou {
					require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
					tk, err = w.Approve(tk.ID)
					require.NoError(t, err)
				}
				require.True(t, tk.Status.Runnable(), tk.Status)

				cat, err := policy.NewCatalog(e.version, e.edit(stepuptest.SeedTools())...)
				require.NoError(t, err)
				exec := &recorder{}
				opts := []gate.Option{gate.WithKey(key),
					gate.WithResolver(canon.FileResolver{Root: w.Dir})}
				for _, tool := range stepuptest.SeedTools() {
					opts = append(opts, gate.WithExecutor(tool.Name, exec))
				}
				next, err := gate.New(w.Store, cat, stepuptest.Passkeys(w.Store), opts...)
				require.NoError(t, err)

				_, err = next.Execute(ctx, tk.ID)
				assert.ErrorIs(t, err, stepup.ErrPolicyChanged)
				assert.Zero(t, exec.Count(), "nothing ran")
				got, err := next.Ticket(ctx, tk.ID)
				require.NoError(t, err)
				assert.True(t, got.Status.Runnable(), "the refusal spent nothing: %s", got.Status)
			})
		}
	}
}
