package passkey_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
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
	g, err := gate.New(st, stepuptest.SeedCatalog(), approver, gate.WithDwell(0)) // approved at once, for brevity
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

// ExampleRequireSeal seals enrolled credentials with a key kept outside
// the database and has the approver accept only sealed ones: a credential
// row written straight into the table does not approve.
func ExampleRequireSeal() {
	ctx := context.Background()
	key := []byte("32+ random bytes kept outside the database")
	st := memory.New(nil)
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKey(key))
	if err != nil {
		panic(err)
	}
	approver, err := passkey.New(st, stepuptest.RP(), passkey.RequireSeal(key))
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), approver, gate.WithDwell(0)) // approved at once, for brevity
	if err != nil {
		panic(err)
	}
	dana, err := stepuptest.Enroll(ctx, enroll, "user:dana")
	if err != nil {
		panic(err)
	}
	tk, err := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	if err != nil {
		panic(err)
	}
	tk, err = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(tk.Status, err)
	_, err = passkey.New(st, stepuptest.RP(), passkey.RequireSeal([]byte("short")))
	fmt.Println(err)
	// Output:
	// approved <nil>
	// stepup: invalid configuration: seal key must be at least 32 bytes
}

// ExampleWithSealKey is the enrollment's half of [ExampleRequireSeal]: the
// credential it stores carries the seal, a 32-byte MAC followed by the id
// of the key that made it (16 characters, derived from the key).
func ExampleWithSealKey() {
	ctx := context.Background()
	st := memory.New(nil)
	enroll, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKey(make([]byte, passkey.MinSealKeySize)))
	if err != nil {
		panic(err)
	}
	a, err := stepuptest.Enroll(ctx, enroll, "user:erin")
	if err != nil {
		panic(err)
	}
	c, err := st.GetCredential(ctx, a.CredentialIDs()[0])
	fmt.Println(len(c.Seal), err)
	// Output:
	// 48 <nil>
}

// ExampleRequireSealKeyRing rotates the seal key of a running service:
// the passkey enrolled under the old key keeps signing in while the old
// key's grace runs.
func ExampleRequireSealKeyRing() {
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	first, _ := keyring.Single(bytes.Repeat([]byte{1}, passkey.MinSealKeySize))
	keys := keyring.NewLive(first)
	enroll, _ := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKeyRing(keys))
	approver, _ := passkey.New(st, stepuptest.RP(), passkey.RequireSealKeyRing(keys, st))
	signin, _ := passkey.NewSignIn(approver)
	a, _ := stepuptest.Enroll(ctx, enroll, "user:erin")
	who := passkey.SignedIn{User: "user:erin", CredentialID: a.CredentialIDs()[0]}

	next, _, _ := first.Rotate(bytes.Repeat([]byte{2}, passkey.MinSealKeySize), clock.Now(), 24*time.Hour)
	keys.Set(next)
	fmt.Println("in grace:", signin.Recheck(ctx, who) == nil)
	clock.Advance(25 * time.Hour)
	fmt.Println("after grace:", errors.Is(signin.Recheck(ctx, who), passkey.ErrUnknownCredential))
	// Output:
	// in grace: true
	// after grace: true
}

// ExampleWithSealKeyRing seals with the ring's current key; the seal
// ends with that key's id.
func ExampleWithSealKeyRing() {
	ctx := context.Background()
	st := memory.New(nil)
	ring, _ := keyring.New(keyring.Key{ID: "seal-2026", Secret: bytes.Repeat([]byte{1}, passkey.MinSealKeySize), State: keyring.Current})
	enroll, _ := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithSealKeyRing(ring))
	a, _ := stepuptest.Enroll(ctx, enroll, "user:erin")
	c, err := st.GetCredential(ctx, a.CredentialIDs()[0])
	fmt.Println(string(c.Seal[32:]), err)
	// Output: seal-2026 <nil>
}
