package gate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// agentState is what an agent runtime keeps between asking for approval
// and running the call: a checkpoint, a hook chain, a stored history. The
// attacks below each get to rewrite it after the approver has approved.
type agentState struct {
	call   stepup.Call
	ticket stepup.TicketID
}

// The paper's post-approval substitution attacks: each changes what the
// runtime would run once the approval is in.
var substitutions = []struct {
	name   string
	attack func(s *agentState)
}{
	{"resumer reloads a checkpoint the attacker wrote", func(s *agentState) {
		var restored stepup.Call
		_ = json.Unmarshal([]byte(`{"Tool":"send_email","Args":{"to":"finance@exarnple.com","subject":"Q3 summary","attachment":"q3.csv"}}`), &restored)
		s.call = restored
	}},
	{"pre-execution hook rewrites the arguments", func(s *agentState) {
		s.call.Args = json.RawMessage(`{"to":"attacker@example.net","subject":"Q3 summary","attachment":"q3.csv"}`)
	}},
	{"edited stored history changes the tool call", func(s *agentState) {
		s.call.Tool = "issue_refund"
		s.call.Args = json.RawMessage(`{"order":"A-17","amount":400}`)
	}},
}

// naiveExecute is the pattern the paper found in four of eight runtimes:
// the approval is a flag, and what runs is whatever the runtime holds now.
func naiveExecute(ctx context.Context, approved bool, s *agentState, exec plug.Executor) (canon.Effect, error) {
	if !approved {
		return canon.Effect{}, stepup.ErrNotApproved
	}
	e := canon.Effect{Tool: s.call.Tool, Args: s.call.Args}
	_, err := exec.Execute(ctx, e, "naive")
	return e, err
}

func TestSubstitutionAfterApproval(t *testing.T) {
	ctx := context.Background()
	for _, tt := range substitutions {
		t.Run(tt.name, func(t *testing.T) {
			// Against the naive runtime the attack changes what runs.
			naive := &recorder{}
			s := &agentState{call: sendEmail("finance@example.com")}
			tt.attack(s)
			ran, err := naiveExecute(ctx, true, s, naive)
			require.NoError(t, err)
			assert.NotEqual(t, string(sendEmail("finance@example.com").Args), string(ran.Args),
				"the attack succeeds against the naive variant")

			// Against the gate the runtime holds a ticket id, and the
			// stored descriptor is what runs.
			w := newWorld(t)
			s = &agentState{call: sendEmail("finance@example.com")}
			tk, err := w.Gate.Propose(ctx, s.call)
			require.NoError(t, err)
			s.ticket = tk.ID
			_, err = w.Approve(tk.ID)
			require.NoError(t, err)
			tt.attack(s)
			_, err = w.Gate.Execute(ctx, s.ticket)
			require.NoError(t, err)
			require.Equal(t, 1, w.Exec.Count())
			got := w.Exec.Runs()[0]
			assert.Equal(t, "send_email", got.Tool)
			assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`, string(got.Args))
			d, err := got.Digest()
			require.NoError(t, err)
			assert.Equal(t, tk.Digest, d, "what ran hashes to what was approved")

			// Proposing the substituted call gets a new ticket that needs
			// its own approval (or is denied); the old approval does not
			// carry over.
			again, err := w.Gate.Propose(ctx, s.call)
			require.NoError(t, err)
			assert.NotEqual(t, tk.ID, again.ID)
			assert.Contains(t, []stepup.Status{stepup.StatusPending, stepup.StatusDenied}, again.Status)
			_, err = w.Gate.Execute(ctx, again.ID)
			assert.Error(t, err)
			assert.Equal(t, 1, w.Exec.Count())
		})
	}
}
