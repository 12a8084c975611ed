package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

func ExampleWithFlood() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	// Three approval requests per session per ten minutes; the rest of
	// flood's defaults (lockouts, pending caps) stay.
	lim, err := flood.New(st, flood.Limits{Session: flood.Rate{N: 3, Per: 10 * time.Minute}}, clock.Now)
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithFlood(lim))
	if err != nil {
		panic(err)
	}
	for i := range 4 {
		tk, _ := g.Propose(context.Background(), stepup.Call{Tool: "send_email",
			Args:    json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","subject":"try %d"}`, i)),
			Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		fmt.Println(tk.Status, tk.Reason)
	}
	// Output:
	// pending external effect
	// pending external effect
	// pending external effect
	// denied rate limited: too many approval requests from this session; retry after 13m20s
}

func ExampleWithoutFloodControlUnsafe() {
	// Only for a closed test bed: any session may ask approvers as often as
	// it likes.
	mem := memory.New(nil)
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithoutFloodControlUnsafe())
	fmt.Println(g != nil, err)
	// Output: true <nil>
}

func ExampleDesk_Grant() {
	g, approver, clock := exampleGate()
	ctx := context.Background()
	desk := g.Desk()
	// Dana lets her agent send e-mail with this subject to finance, twice
	// in the next eight hours, signing the grant with her passkey.
	tmpl := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "send_email", Audience: "send_email", User: "user:dana",
		Args: []grant.Rule{grant.InDomains("/to", "example.com"), grant.Pin("/subject", "Daily figures")}}}
	tk, err := desk.Grant(ctx, "user:dana", gate.GrantSpec{Grant: tmpl, Uses: 2, ExpiresAt: clock.Now().Add(8 * time.Hour)})
	if err != nil {
		panic(err)
	}
	tk, err = stepuptest.Approve(ctx, desk, approver, tk.ID)
	fmt.Println(tk.Tool, tk.Status, err)

	for _, args := range []string{
		`{"to":"finance@example.com","subject":"Daily figures"}`,
		`{"to":"finance@example.com","subject":"Daily figures","attachment":"q3.csv"}`,
	} {
		call, err := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(args), Session: "s-1",
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, Grant: string(tk.ID)})
		if err != nil {
			panic(err)
		}
		fmt.Println(call.Status)
	}
	// Output:
	// asu.grant executed <nil>
	// approved
	// pending
}
