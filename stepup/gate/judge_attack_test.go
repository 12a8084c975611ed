package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// yesJudge approves everything it is shown, however it is asked: a model
// the agent talked round.
type yesJudge struct{}

func (yesJudge) Decide(context.Context, string, string) plug.Judgment {
	return plug.Judgment{Approve: true, Reason: "looks fine", ModelID: "yes-model"}
}

// TestModelJudgeNeverStandsInForAQuorum: a call that needs several people
// is never approved, in part or whole, by a model, whichever classes the
// judge is given; nor is a class the judge was not given. A call of a class
// it was given and that needs one person is (the control: the judge does
// approve, so the test can fail).
func TestModelJudgeNeverStandsInForAQuorum(t *testing.T) {
	ctx := context.Background()
	classes := [][]string{nil, {card.ClassExternal}, {card.ClassExternal, card.ClassIrreversible}, {card.ClassIrreversible}}
	for _, judged := range classes {
		t.Run(fmt.Sprint(judged), func(t *testing.T) {
			tools := policy.RequireQuorum(card.ClassIrreversible, 2,
				policy.Tool{Name: "wire", Title: "Wire", Class: card.ClassIrreversible, Approvers: "finance"})
			tools = append(tools,
				policy.Tool{Name: "wire2", Title: "Wire", Class: card.ClassExternal, Approvers: "finance", Quorum: 2},
				policy.Tool{Name: "mail", Title: "Mail", Class: card.ClassExternal},
				policy.Tool{Name: "refund", Title: "Refund", Class: card.ClassIrreversible})
			cat, err := policy.NewCatalog("judge-attack-1", tools...)
			require.NoError(t, err)
			exec := &countingExecutor{}
			opts := []gate.Option{gate.WithDwell(0), gate.WithoutFloodControlUnsafe(),
				gate.WithApproverGroup("finance", "user:dana", "user:erin", "user:finn"),
				gate.WithModelJudge(yesJudge{}, judged...)}
			for _, tool := range []string{"wire", "wire2", "mail", "refund"} {
				opts = append(opts, gate.WithExecutor(tool, exec))
			}
			g, err := gate.New(memory.New(nil), cat, fixedApprover{"user:erin"}, opts...)
			require.NoError(t, err)
			isJudged := func(class string) bool {
				if judged == nil {
					return class == card.ClassExternal
				}
				for _, c := range judged {
					if c == class {
						return true
					}
				}
				return false
			}
			for i, tc := range []struct {
				tool, class string
				quorum      bool
			}{{"wire", card.ClassIrreversible, true}, {"wire2", card.ClassExternal, true},
				{"mail", card.ClassExternal, false}, {"refund", card.ClassIrreversible, false}} {
				tk, err := g.Propose(ctx, stepup.Call{Tool: tc.tool, Args: json.RawMessage(`{"n":1}`), Step: fmt.Sprint(i),
					Session: fmt.Sprint("s", i), Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
				require.NoError(t, err)
				deadline := time.Now().Add(2 * time.Second)
				for tk.Status == stepup.StatusPending && time.Now().Before(deadline) && !tc.quorum && isJudged(tc.class) {
					time.Sleep(5 * time.Millisecond) // the judge decides in the background
					tk, err = g.Ticket(ctx, tk.ID)
					require.NoError(t, err)
				}
				_, execErr := g.Execute(ctx, tk.ID)
				switch {
				case tc.quorum:
					assert.Error(t, execErr, "%s: a model approved a quorum call", tc.tool)
					assert.Equal(t, stepup.StatusPending, tk.Status, tc.tool)
				case isJudged(tc.class):
					assert.NoError(t, execErr, "%s: the judge's own class runs on its approval", tc.tool)
				default:
					assert.Error(t, execErr, "%s: a model decided a class it was not given", tc.tool)
				}
			}
		})
	}
}
