package attackkit_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/agentstepup/asu/stepup/attackkit"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleRun wires an integration to the kit, in a test file of the
// framework. Runtime is whatever the framework's agent side holds; the
// hooks are the framework's own ways of changing its state.
func ExampleRun() {
	adapter := func(t testing.TB, tools *attackkit.Tools) attackkit.Target {
		h := stepuptest.NewGate(t, nil,
			gate.WithExecutor("send_email", tools), gate.WithExecutor("issue_refund", tools))
		return attackkit.Target{
			Runtime: h.Gate, // or the framework's loop over it, or remote.NewClient(...)
			People:  attackkit.NewDesk(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), h.Clock.Now),
			Advance: func(d time.Duration) { h.Clock.Advance(d) },
			// Say, Checkpoint, Hook, History, Resubmit: how the framework
			// lets code other than the approver change what it holds.
			// Left nil, those attacks are skipped with the reason.
		}
	}
	testAttackKit := func(t *testing.T) {
		rep := attackkit.Run(t, adapter) // subtests such as "P2 effect binding/substitution by a resumer"
		if rep.Outcome(attackkit.P2) != attackkit.Held {
			t.Log(rep)
		}
	}
	_ = testAttackKit
}

// ExampleNewDesk answers an asu gate's prompts as people with fake
// passkeys: the requesting agent is refused, the user is not.
func ExampleNewDesk() {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	defer st.Close()
	tools := &attackkit.Tools{}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithExecutor("send_email", tools),
		gate.WithDwell(0)) // the kit's approvers answer at once
	if err != nil {
		log.Fatal(err)
	}
	enrollment, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	if err != nil {
		log.Fatal(err)
	}
	people := attackkit.NewDesk(g.Desk(), enrollment, stepuptest.RP(), clock.Now)
	if _, err := people.Person(ctx, attackkit.User); err != nil { // the user has a passkey
		log.Fatal(err)
	}

	call := stepuptest.SendEmail("finance@exarnple.com")
	call.Principal.User, call.Principal.Agent = attackkit.User, attackkit.Agent
	call.Rationale = "Sending the summary to finance@example.com as usual."
	tk, err := g.Propose(ctx, call)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("proposed:", tk.Status)
	fmt.Println("the agent is refused:", people.Approve(ctx, tk.ID, attackkit.Agent) != nil)
	cd, err := people.View(ctx, tk.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("card shows the real recipient:", strings.Contains(cd.Trusted, "finance@exarnple.com"))
	fmt.Println("agent's text kept apart:", !strings.Contains(cd.Trusted, "as usual"))
	if err := people.Approve(ctx, tk.ID, attackkit.User); err != nil {
		log.Fatal(err)
	}
	_, err = g.Execute(ctx, tk.ID)
	fmt.Println("ran:", len(tools.Runs()), err)
	// Output:
	// proposed: pending
	// the agent is refused: true
	// card shows the real recipient: true
	// agent's text kept apart: true
	// ran: 1 <nil>
}
