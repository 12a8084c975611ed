package gate_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/modelapprove"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// cautiousModel stands in for a language model (see the adapters module's
// openaijudge for an OpenAI-compatible one).
type cautiousModel struct{}

func (cautiousModel) ID() string { return "cautious-1" }

func (cautiousModel) Complete(context.Context, string, string) (string, error) {
	return `{"decision":"deny","reason":"the attachment leaves the company"}`, nil
}

func ExampleWithModelJudge() {
	judge, err := modelapprove.NewJudge(cautiousModel{}, nil)
	if err != nil {
		panic(err)
	}
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	// The model decides external effects; irreversible ones stay with people.
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithModelJudge(judge, "external"))
	if err != nil {
		panic(err)
	}
	tk, err := g.Propose(context.Background(), stepup.Call{Tool: "send_email",
		Args:    json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	if err != nil {
		panic(err)
	}
	a, _ := st.Get(context.Background(), string(tk.ID))
	fmt.Println(tk.Status, a.Approver)
	// Output: denied model:cautious-1
}
