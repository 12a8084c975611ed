package gate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// acmeCards brands the card: its title carries the company's name. The
// card's hash covers what is shown, so the passkey still signs what the
// approver saw.
type acmeCards struct{}

func (acmeCards) Render(s canon.Sealed, c card.Context) (*card.Card, error) {
	c.Title = "ACME approvals: " + c.Title
	return card.Render(s.Effect(), c)
}

// smallCalls refuses calls whose canonical effect is over 4 KiB.
type smallCalls struct{}

func (smallCalls) Seal(e canon.Effect) (canon.Sealed, error) {
	s, err := canon.Seal(e)
	if err == nil && s.Len() > 4<<10 {
		return canon.Sealed{}, errors.New("call too large for this deployment")
	}
	return s, err
}

// ExampleWithRenderer plugs a branded card renderer and a stricter Canon
// into a gate.
func ExampleWithRenderer() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithRenderer(acmeCards{}), gate.WithCanon(smallCalls{}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	fmt.Println(tk.Status)
	big := stepuptest.SendEmail("finance@example.com")
	big.Args = []byte(`{"to":"finance@example.com","subject":"` + strings.Repeat("Q3 ", 2000) + `"}`)
	tk, _ = g.Propose(ctx, big)
	fmt.Println(tk.Status)
	// Output:
	// pending
	// denied
}
