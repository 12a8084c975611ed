package exectoken_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ringExample is a gate signing tokens with a live ring, and one approved
// e-mail with its token, issued under the ring's first key.
type ringExample struct {
	g      *gate.Gate
	clock  *stepuptest.Clock
	store  exectoken.Store
	keys   *keyring.Live
	ticket stepup.TicketID
	token  string
	effect canon.Effect
}

func newRingExample() ringExample {
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
	return ringExample{g: g, clock: clock, store: mem, keys: keys, ticket: tk.ID, token: token,
		effect: canon.Effect{Tool: c.Tool, Args: c.Args, Principal: c.Principal,
			PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "send_email"}}
}

// ExampleNewTokenIssuerRing issues a token under a ring key, rotates the
// ring on the gate and the executor, and spends the token during the old
// key's grace.
func ExampleNewTokenIssuerRing() {
	x := newRingExample()
	next, _, _ := x.keys.Ring().Rotate(bytes.Repeat([]byte{2}, 32), x.clock.Now(), time.Hour)
	x.keys.Set(next)
	mailer, _ := exectoken.NewVerifierRing(next.Public(), "gate.example.com", "send_email", x.store, x.g)
	claims, err := mailer.Verify(context.Background(), x.token, x.effect)
	fmt.Println(claims.Ticket == x.ticket, err)
	// Output: true <nil>
}

// ExampleNewVerifierRing refuses a token whose key was retired and whose
// grace ended, though the token itself has not expired.
func ExampleNewVerifierRing() {
	x := newRingExample()
	next, _, _ := x.keys.Ring().Rotate(bytes.Repeat([]byte{2}, 32), x.clock.Now(), 10*time.Second)
	mailer, _ := exectoken.NewVerifierRing(next.Public(), "gate.example.com", "send_email", x.store, x.g)
	x.clock.Advance(20 * time.Second)
	_, err := mailer.Verify(context.Background(), x.token, x.effect)
	fmt.Println(errors.Is(err, exectoken.ErrTokenSignature), errors.Is(err, keyring.ErrRetired))
	// Output: true true
}
