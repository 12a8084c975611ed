package exectoken_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleNewTokenIssuerRing issues a token under a ring key, rotates the
// ring on the gate and the executor, and spends the token during the old
// key's grace.
func ExampleNewTokenIssuerRing() {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	g, _ := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem), gate.WithDwell(0))
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(mem), "user:dana")

	first, _ := keyring.Single(bytes.Repeat([]byte{1}, 32))
	keys := keyring.NewLive(first)
	issuer, _ := exectoken.NewTokenIssuerRing(g, keys, "gate.example.com")

	c := stepup.Call{Tool: "send_email", Args: []byte(`{"to":"finance@example.com","subject":"Q3 summary"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	tk, _ := g.Propose(ctx, c)
	_, _ = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	token, _ := issuer.Issue(ctx, tk.ID)

	next, _, _ := first.Rotate(bytes.Repeat([]byte{2}, 32), clock.Now(), time.Hour)
	keys.Set(next)
	mailer, _ := exectoken.NewVerifierRing(next.Public(), "gate.example.com", "send_email", mem, g)
	claims, err := mailer.Verify(ctx, token, canon.Effect{Tool: c.Tool, Args: c.Args, Principal: c.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "send_email"})
	fmt.Println(claims.Ticket == tk.ID, err)
	// Output: true <nil>
}
