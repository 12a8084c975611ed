package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// forgery is one way a database writer, holding neither an approver's
// passkey nor the gate's key, writes an approval: which approver the row
// names and which evidence it carries.
type forgery struct {
	name     string
	approver func(w *world) string
	evidence func(t *testing.T, w *world, donor store.Approval) []byte
}

// forgeries cover the approver names (a person, the policy, a grant, a
// stranger) crossed with the evidence a writer can get hold of: none,
// garbage, and real evidence lifted from another approved row.
func forgeries() []forgery {
	approvers := map[string]func(w *world) string{
		"the user":      func(*world) string { return "user:dana" },
		"another user":  func(*world) string { return "user:erin" },
		"the policy":    func(*world) string { return "policy:2026-10-30.1" },
		"a grant":       func(*world) string { return "grant:g-1" },
		"an agent":      func(*world) string { return "agent:reports" },
		"an empty name": func(*world) string { return "" },
	}
	evidence := map[string]func(t *testing.T, w *world, donor store.Approval) []byte{
		"no evidence": func(*testing.T, *world, store.Approval) []byte { return nil },
		"garbage":     func(*testing.T, *world, store.Approval) []byte { return []byte(`{"verdict":"yes"}`) },
		"a forged MAC": func(*testing.T, *world, store.Approval) []byte {
			return []byte(`{"gate_mac":"` + fmt.Sprintf("%064x", 7) + `"}`)
		},
		"a lifted evidence": func(_ *testing.T, _ *world, donor store.Approval) []byte { return donor.Evidence },
	}
	var out []forgery
	for an, a := range approvers {
		for en, e := range evidence {
			out = append(out, forgery{name: an + " with " + en, approver: a, evidence: e})
		}
	}
	return out
}

// TestExecuteDoesNotTrustTheDatabase writes approvals straight into the
// store, as a database writer would, for calls nobody approved: Execute
// re-verifies the stored evidence (the passkey assertion against the
// challenge of the stored effect, or the gate's MAC on its own approvals)
// and runs none of them. Evidence lifted from a real approval of another
// call does not carry over either: it commits to that call's digest,
// nonce, expiry and card.
func TestExecuteDoesNotTrustTheDatabase(t *testing.T) {
	ctx := context.Background()
	for _, donorKind := range []string{"a passkey approval", "a policy allowance"} {
		for _, f := range forgeries() {
			t.Run(donorKind+"/"+f.name, func(t *testing.T) {
				w := newWorld(t)
				donor := donorTicket(t, w, donorKind)
				row, err := w.Store.Get(ctx, string(donor.ID))
				require.NoError(t, err)

				target, err := w.Gate.Propose(ctx, sendEmail("mallory@example.net.evil"))
				require.NoError(t, err)
				if target.Status != stepup.StatusPending {
					target, err = w.Gate.Propose(ctx, sendEmail("ops@example.com"))
					require.NoError(t, err)
				}
				require.Equal(t, stepup.StatusPending, target.Status)
				_, err = w.Store.Resolve(ctx, string(target.ID), store.Resolution{To: store.Approved,
					Approver: f.approver(w), Evidence: f.evidence(t, w, row), At: w.Clock.Now()}, nil)
				require.NoError(t, err, "the writer's row is in the database")

				before := w.Exec.Count()
				_, err = w.Gate.Execute(ctx, target.ID)
				require.Error(t, err)
				assert.ErrorIs(t, err, stepup.ErrBadAssertion)
				assert.Equal(t, before, w.Exec.Count(), "nothing ran")
			})
		}
	}
}

// TestExecuteRunsGenuineApprovals is the other side: approvals made
// through the gate verify and run, for each kind of approver.
func TestExecuteRunsGenuineApprovals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	tk := approved(t, w, sendEmail("finance@example.com"))
	_, err := w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	allowed, err := w.Gate.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, allowed.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, w.Exec.Count())
}

// donorTicket is a real approval whose evidence a database writer lifts:
// kind "a passkey approval" (a person's passkey answer) or "a policy
// allowance" (the gate's own MAC on an allowed call).
func donorTicket(t *testing.T, w *world, kind string) stepup.Ticket {
	t.Helper()
	if kind == "a passkey approval" {
		return approved(t, w, sendEmail("finance@example.com"))
	}
	donor, err := w.Gate.Propose(context.Background(), stepup.Call{Tool: "read_file",
		Args: json.RawMessage(`{"path":"q3.csv"}`), Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, donor.Status)
	return donor
}
