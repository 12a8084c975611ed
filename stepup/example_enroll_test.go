package stepup_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup/passkey"
)

// ExampleAdmin_BeginEnroll shows the early check: an expired invite is
// refused before any registration options are made, so no enrollment page
// is shown for it.
func ExampleAdmin_BeginEnroll() {
	g, _, clock := exampleGate()
	ctx := context.Background()
	token, err := g.Admin().Invite(ctx, "user:erin")
	if err != nil {
		panic(err)
	}
	opts, err := g.Admin().BeginEnroll(ctx, token) // to navigator.credentials.create
	fmt.Println(len(opts) > 0, err)

	clock.Advance(24 * time.Hour) // the default invite lifetime
	_, err = g.Admin().BeginEnroll(ctx, token)
	fmt.Println(errors.Is(err, passkey.ErrInvite))
	// Output:
	// true <nil>
	// true
}
