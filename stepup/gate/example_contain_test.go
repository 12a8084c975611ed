package gate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// stuckPolicy ignores its context and never answers in time; released,
// it would allow everything.
type stuckPolicy struct{ release chan struct{} }

func (p stuckPolicy) Decide(context.Context, plug.Proposal) (plug.Decision, error) {
	<-p.release
	return plug.Decision{Verdict: plug.Allow, Reason: "too late", PolicyVersion: "v1"}, nil
}

// ExampleWithPluginTimeout: a policy that hangs past its deadline decides
// nothing. The call is denied with the misbehaviour as its reason, and
// the gate counts the policy's goroutine until it returns.
func ExampleWithPluginTimeout() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	p := stuckPolicy{release: make(chan struct{})}
	g, err := gate.New(st, p, stepuptest.Passkeys(st), gate.WithPluginTimeout(50*time.Millisecond))
	if err != nil {
		panic(err)
	}
	tk, err := g.Propose(context.Background(), stepuptest.SendEmail("finance@example.com"))
	if err != nil {
		panic(err)
	}
	fmt.Println(tk.Status, "-", tk.Reason)
	fmt.Println("stragglers:", g.Stragglers())
	close(p.release)
	for g.Stragglers() > 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("stragglers:", g.Stragglers())
	// Output:
	// denied - policy could not decide: policy did not answer by its deadline
	// stragglers: 1
	// stragglers: 0
}
