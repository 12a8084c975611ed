package passkey_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// ExampleNew mounts the passkey approver on a gate: approvers answer with
// passkeys scoped to the approval site's relying party.
func ExampleNew() {
	st := memory.New(nil)
	rp := passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com"}
	approver, err := passkey.New(st, rp)
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), approver)
	fmt.Println(g != nil, err)

	_, err = passkey.New(st, passkey.RelyingParty{ID: "approve.example.com", Origin: "http://approve.example.com"})
	fmt.Println(err)
	// Output:
	// true <nil>
	// stepup: invalid configuration: relying party origin must be an https origin
}

// ExampleEnrollment_Invite mints a one-time invite for a person; agents
// and the gate's own names cannot be invited.
func ExampleEnrollment_Invite() {
	enroll, err := passkey.NewEnrollment(memory.New(nil), stepuptest.RP())
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	token, err := enroll.Invite(ctx, "user:erin")
	fmt.Println(token != "", err)
	_, err = enroll.Invite(ctx, "agent:reports")
	fmt.Println(err)
	// Output:
	// true <nil>
	// invite: stepup: approver may not decide this ticket: approvers are people, not agents
}

// ExampleEnrollment_BeginEnroll shows the early check: an expired invite is
// refused before any registration options are made, so no enrollment page
// is shown for it.
func ExampleEnrollment_BeginEnroll() {
	clock := stepuptest.NewClock(stepuptest.Start())
	enroll, err := passkey.NewEnrollment(memory.New(nil), stepuptest.RP(), passkey.WithClock(clock.Now))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	token, err := enroll.Invite(ctx, "user:erin")
	if err != nil {
		panic(err)
	}
	opts, err := enroll.BeginEnroll(ctx, token) // to navigator.credentials.create
	fmt.Println(len(opts) > 0, err)

	clock.Advance(passkey.DefaultInviteTTL)
	_, err = enroll.BeginEnroll(ctx, token)
	fmt.Println(errors.Is(err, passkey.ErrInvite))
	// Output:
	// true <nil>
	// true
}
