package gate_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// Before her passkey answer counts, Dana picks the recipient's domain
// out of four; a look-alike pick is refused and the card shown again,
// the right one approves.
func ExampleWithConfirmation() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithConfirmation(card.ClassExternal))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))

	c, _ := g.Desk().Confirmation(ctx, tk.ID)
	fmt.Println(c.Asks, len(c.Choices))
	p, _ := g.Desk().Prompt(ctx, tk.ID)
	answer, _ := dana.Assert(p.Options)
	_, err = g.Desk().Approve(ctx, tk.ID, answer)
	fmt.Println(errors.Is(err, plug.ErrPickNeeded))
	for _, ch := range c.Choices {
		if ch.Text != "example.com" {
			_, err = g.Desk().ApprovePicked(ctx, tk.ID, ch.Pick, answer)
			fmt.Println(errors.Is(err, plug.ErrWrongPick))
			break
		}
	}
	for _, ch := range c.Choices {
		if ch.Text == "example.com" {
			answer, _ = dana.Assert(p.Options)
			done, err := g.Desk().ApprovePicked(ctx, tk.ID, ch.Pick, answer)
			fmt.Println(done.Status, err)
		}
	}
	// Output:
	// recipient domain 4
	// true
	// true
	// approved <nil>
}

// The page shows the options in the order given and posts the pick of
// the one the approver chose, with the passkey answer.
func ExampleDesk_Confirmation() {
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, _ := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithConfirmation(card.ClassExternal))
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	c, _ := g.Desk().Confirmation(ctx, tk.ID)
	right := 0
	for _, ch := range c.Choices {
		if ch.Text == "example.com" {
			right++
		}
	}
	fmt.Printf("which %s? %d options, %d right\n", c.Asks, len(c.Choices), right)
	// Output: which recipient domain? 4 options, 1 right
}
