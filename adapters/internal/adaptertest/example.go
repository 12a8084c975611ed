package adaptertest

import (
	"context"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// Example is the gate of the adapters' examples, which have no
// testing.T: the seed catalog on an in-memory store, every tool run by
// Sent, and the user of [Scope] enrolled with a fake passkey that
// approves on the gate's desk, as her own device would.
type Example struct {
	Gate *gate.Gate
	Sent *stepuptest.Recorder

	st   *memory.Store
	user *stepuptest.Authenticator
}

// NewExample builds an Example; Close it when done.
func NewExample() (*Example, error) {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	sent := &stepuptest.Recorder{}
	opts := []gate.Option{gate.WithDwell(0)} // the fake passkey answers at once
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, sent))
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), opts...)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	user, err := stepuptest.Enroll(context.Background(), stepuptest.Enrollment(st), stepuptest.Approver)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &Example{Gate: g, Sent: sent, st: st, user: user}, nil
}

// Approve approves ticket id with the user's passkey, on the approver's
// side of the gate.
func (e *Example) Approve(ctx context.Context, id stepup.TicketID) error {
	p, err := e.Gate.Desk().Prompt(ctx, id)
	if err != nil {
		return err
	}
	answer, err := e.user.Assert(p.Options)
	if err != nil {
		return err
	}
	_, err = e.Gate.Desk().Approve(ctx, id, answer)
	return err
}

// Close closes the store.
func (e *Example) Close() { _ = e.st.Close() }
