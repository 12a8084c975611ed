package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// ExampleWithKeyRing rotates the key of a running gate: the call the
// policy allowed before the rotation runs after it, during the old key's
// grace.
func ExampleWithKeyRing() {
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := stepuptest.Memory(clock)
	first, _ := keyring.Single(bytes.Repeat([]byte{1}, 32))
	keys := keyring.NewLive(first)
	run := plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) { return []byte(`[]`), nil })
	g, err := gate.New(mem, stepuptest.SeedCatalog(), stepuptest.Passkeys(mem),
		gate.WithKeyRing(keys), gate.WithExecutor("search_tickets", run))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "search_tickets", Args: json.RawMessage(`{"q":"refund"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})

	next, _, _ := first.Rotate(bytes.Repeat([]byte{2}, 32), clock.Now(), time.Hour)
	keys.Set(next)
	res, err := g.Execute(ctx, tk.ID)
	fmt.Println(string(res.Output), err)
	// Output: [] <nil>
}

// ExampleAdmin_CheckpointWith signs the audit head with the ring's
// current key; an auditor verifies it with the ring's public half while
// that key is in force.
func ExampleAdmin_CheckpointWith() {
	g, _, clock := exampleGate()
	ring, _ := keyring.Single(bytes.Repeat([]byte{3}, 32))
	sc, err := g.Admin().CheckpointWith(context.Background(), ring)
	if err != nil {
		panic(err)
	}
	fmt.Println(sc.KeyID == ring.Current().ID)
	fmt.Println(receipt.VerifySignedCheckpoint(ring.Public(), sc, clock.Now()))

	rotated, _, _ := ring.Rotate(bytes.Repeat([]byte{4}, 32), clock.Now(), time.Hour)
	err = receipt.VerifySignedCheckpoint(rotated.Public(), sc, clock.Now().Add(2*time.Hour))
	fmt.Println(errors.Is(err, receipt.ErrCheckpoint), errors.Is(err, keyring.ErrRetired))
	// Output:
	// true
	// <nil>
	// true true
}
