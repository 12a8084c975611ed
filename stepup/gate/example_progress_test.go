package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentstepup/asu/stepup/plug"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// A refund needs two of finance: after Dana's approval every screen words
// where it stands from the same progress, and Dana again is told she
// already approved.
func ExampleDesk_Progress() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "issue_refund", Class: card.ClassIrreversible,
		Approvers: "finance", Quorum: 2})
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, cat, stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithApproverGroup("finance", "user:dana", "user:erin", "user:finn"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":120}`),
		Session: "s-1", Principal: canon.Principal{User: "user:ivy", Agent: "agent:billing"}})
	_, _ = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)

	p, _ := g.Desk().Progress(ctx, tk.ID)
	fmt.Println(p.Sentence())
	fmt.Println(p.Awaited)
	_, err = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(errors.Is(err, plug.ErrAlreadyApproved))
	// Output:
	// 1 of 2 approved by user:dana; waiting for one more of finance
	// [user:erin user:finn]
	// true
}

// The approver's page says the card is shown and holds its approve button
// for as long as the gate answers; an approval after that is never too
// soon.
func ExampleDesk_ShowFor() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithLocalClock(clock.Now),
		gate.WithDwell(10*time.Second, card.ClassExternal))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	s, _ := g.Desk().ShowFor(ctx, tk.ID)
	fmt.Println(s.Dwell, s.AcceptableAt.Sub(s.Now))
	clock.Advance(s.AcceptableAt.Sub(s.Now))
	got, err := stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(got.Status, err)
	// Output:
	// 10s 10s
	// approved <nil>
}
