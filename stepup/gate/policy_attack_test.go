package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/memory"
)

// decideOnly hides every method of a policy but Decide, so the gate must
// ask it again (rather than a router) for the route of a stored ticket.
type decideOnly struct{ p plug.Policy }

func (d decideOnly) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return d.p.Decide(ctx, p)
}

// policyVersions are the catalogs a deploy moves between: the same tool
// needing a person, now unattended, now routed to a group, now with a
// limit, now gone.
func policyVersions(t *testing.T) map[string]*policy.Catalog {
	t.Helper()
	mk := func(version string, tools ...policy.Tool) *policy.Catalog {
		c, err := policy.NewCatalog(version, tools...)
		require.NoError(t, err)
		return c
	}
	mail := policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal}
	unattended := mail
	unattended.Unattended = true
	grouped := mail
	grouped.Approvers = "ops"
	limited := mail
	limited.Limits = []policy.Limit{policy.AllowDomains("to", "example.org")}
	return map[string]*policy.Catalog{
		"v1": mk("v1", mail), "v2 same tools": mk("v2", mail), "v2 unattended": mk("v2u", unattended),
		"v2 grouped": mk("v2g", grouped), "v2 limited": mk("v2l", limited), "v2 without the tool": mk("v2x",
			policy.Tool{Name: "other", Title: "Other", Class: card.ClassRead}),
	}
}

// TestApprovalBoundToItsPolicyVersion: for every pair of catalog versions
// and both kinds of policy (a router, and a bare Decide), a ticket parked or
// approved by a gate on one version is neither approved nor run by a gate
// on another that shares the store, and Runnable says so too; on its own
// version it runs once.
func TestApprovalBoundToItsPolicyVersion(t *testing.T) {
	ctx := context.Background()
	versions := policyVersions(t)
	for fromName, from := range versions {
		for toName, to := range versions {
			for _, bare := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s to %s bare=%v", fromName, toName, bare), func(t *testing.T) {
					if from == to {
						t.Skip("same version")
					}
					st := memory.New(nil)
					exec := &countingExecutor{}
					newGate := func(p *policy.Catalog) *gate.Gate {
						var pol plug.Policy = p
						if bare {
							pol = decideOnly{p}
						}
						g, err := gate.New(st, pol, fixedApprover{"user:dana"}, gate.WithDwell(0),
							gate.WithoutFloodControlUnsafe(), gate.WithApproverGroup("ops", "user:dana", "user:erin"),
							gate.WithKey([]byte("policy-attack-key-0123456789abcd")), gate.WithExecutor("mail", exec))
						require.NoError(t, err)
						return g
					}
					old, cur := newGate(from), newGate(to)
					call := func(step string) stepup.Call {
						return stepup.Call{Tool: "mail", Args: json.RawMessage(`{"to":"x@example.com"}`), Step: step,
							Session: "s-" + step, Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
					}
					parked, err := old.Propose(ctx, call("parked"))
					require.NoError(t, err)
					ran, err := old.Propose(ctx, call("approved"))
					require.NoError(t, err)
					if ran.Status == stepup.StatusPending {
						ran, err = old.Desk().Approve(ctx, ran.ID, []byte(`yes`))
						require.NoError(t, err)
					}
					if ran.Status == stepup.StatusDenied {
						t.Skip("the old version denies the call: nothing to carry over")
					}
					require.True(t, ran.Status.Runnable())

					if parked.Status == stepup.StatusPending {
						_, err = cur.Desk().Approve(ctx, parked.ID, []byte(`yes`))
						assert.Error(t, err, "approved under another version")
					}
					_, err = cur.Runnable(ctx, ran.ID)
					assert.ErrorIs(t, err, stepup.ErrPolicyChanged)
					_, err = cur.Execute(ctx, ran.ID)
					assert.ErrorIs(t, err, stepup.ErrPolicyChanged)
					assert.Zero(t, exec.runs.Load(), "ran under another policy version")
					_, err = old.Execute(ctx, ran.ID)
					require.NoError(t, err, "on its own version it runs")
					assert.EqualValues(t, 1, exec.runs.Load())
				})
			}
		}
	}
}
