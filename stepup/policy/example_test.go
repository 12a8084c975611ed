package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

func ExampleNewCatalog() {
	cat, err := policy.NewCatalog("tools-v1",
		policy.Tool{Name: "read_file", Class: card.ClassRead},
		policy.Tool{Name: "issue_refund", Class: card.ClassIrreversible,
			Limits: []policy.Limit{policy.MaxAmount("amount", "500")}})
	if err != nil {
		panic(err)
	}
	for _, args := range []string{`{"amount":20}`, `{"amount":900}`} {
		d, _ := cat.Decide(context.Background(), plug.Proposal{Tool: "issue_refund", Args: json.RawMessage(args)})
		fmt.Println(d.Verdict, d.Reason)
	}
	// Output:
	// needs_approval irreversible effect
	// deny over the per-call limit
}

func ExampleRequireQuorum() {
	tools := []policy.Tool{
		{Name: "send_email", Class: card.ClassExternal},
		{Name: "issue_refund", Class: card.ClassIrreversible, Approvers: "finance"},
	}
	// The rule of two for every irreversible effect, in one line.
	tools = policy.RequireQuorum(card.ClassIrreversible, 2, tools...)
	cat, err := policy.NewCatalog("tools-v2", tools...)
	if err != nil {
		panic(err)
	}
	route, _ := cat.Route("issue_refund", "tools-v2")
	fmt.Println(route.Approvers, route.Quorum)
	// Output: finance 2
}

// ExampleCatalog_Schema: a front end shows the model the schema the
// catalog enforces, not whatever the tool's server lists.
func ExampleCatalog_Schema() {
	c, err := policy.NewCatalog("v1", policy.Tool{Name: "read_file", Class: card.ClassRead,
		Schema: json.RawMessage(`{"type":"object","required":["path"]}`)})
	if err != nil {
		log.Fatal(err)
	}
	s, admitted := c.Schema("read_file")
	fmt.Println(string(s), admitted)
	_, admitted = c.Schema("rm")
	fmt.Println(admitted)
	// Output:
	// {"type":"object","required":["path"]} true
	// false
}
