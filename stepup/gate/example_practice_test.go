package gate_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// After every real request for Dana's own queue, a practice copy of it
// with a look-alike recipient domain waits beside it; approving the copy
// runs nothing and tells her what gave it away.
func ExampleWithPractice() {
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithPractice("", 1))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	_ = g.Settle(ctx) // the practice copy is placed after the agent has its answer
	q, _ := g.Desk().Queue(ctx, "user:dana", 10)
	fmt.Println(len(q))
	for _, e := range q {
		if e.Ticket.ID == tk.ID {
			continue
		}
		_, err := g.Ticket(ctx, e.Ticket.ID)
		fmt.Println(err)
		p, _ := g.Desk().Prompt(ctx, e.Ticket.ID)
		fmt.Println(p.Card.Summary().Recipients[0].Domain)
		answer, _ := dana.Assert(p.Options)
		done, _ := g.Desk().Approve(ctx, e.Ticket.ID, answer)
		fmt.Println(done.Status, strings.Contains(done.Reason, "look-alike"))
	}
	// Output:
	// 2
	// ticket: stepup: not found
	// exarnple.com
	// denied true
}

// Settle waits for what the gate does after an agent has its answer: here
// the placing of a practice request.
func ExampleGate_Settle() {
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithPractice("", 1))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, _ = g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	if err := g.Settle(ctx); err != nil {
		panic(err)
	}
	q, _ := g.Desk().Queue(ctx, "user:dana", 10)
	fmt.Println(len(q), "waiting for dana: the request and its practice copy")
	// Output: 2 waiting for dana: the request and its practice copy
}
