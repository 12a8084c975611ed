package gate_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

func exampleCall(to string) stepup.Call {
	return stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"` + to + `"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
}

// An operator revokes an approval before it runs; it never runs.
func ExampleAdmin_RevokeTicket() {
	g, dana, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, exampleCall("finance@example.com"))
	tk, _ = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	tk, err := g.Admin().RevokeTicket(ctx, tk.ID, "user:ops", "sent by mistake")
	fmt.Println(tk.Status, err)
	_, err = g.Execute(ctx, tk.ID)
	fmt.Println(errors.Is(err, stepup.ErrRevoked))
	// Output:
	// revoked <nil>
	// true
}

// An approver's queue: what they may decide now, soonest expiry first.
func ExampleDesk_Queue() {
	g, _, clock := exampleGate()
	ctx := context.Background()
	_, _ = g.Propose(ctx, exampleCall("finance@example.com"))
	clock.Advance(time.Minute)
	_, _ = g.Propose(ctx, exampleCall("ops@example.com"))
	q, _ := g.Desk().Queue(ctx, "user:dana", 10)
	for _, e := range q {
		fmt.Println(e.Ticket.Status, e.User, e.Agent)
	}
	q, _ = g.Desk().Queue(ctx, "user:erin", 10)
	fmt.Println(len(q))
	// Output:
	// pending user:dana agent:reports
	// pending user:dana agent:reports
	// 0
}

// An approver's own view, paged: the tickets they may decide or still
// revoke, in the states asked for.
func ExampleDesk_List() {
	g, dana, _ := exampleGate()
	ctx := context.Background()
	first, _ := g.Propose(ctx, exampleCall("finance@example.com"))
	_, _ = stepuptest.Approve(ctx, g.Desk(), dana, first.ID)
	_, _ = g.Propose(ctx, exampleCall("ops@example.com"))
	f := store.Filter{States: []store.State{store.Pending, store.Approved}, Limit: 1}
	for {
		page, next, _ := g.Desk().List(ctx, "user:dana", f)
		for _, e := range page {
			fmt.Println(e.Ticket.Status)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	page, _, _ := g.Desk().List(ctx, "user:erin", store.Filter{})
	fmt.Println(len(page))
	// Unordered output:
	// approved
	// pending
	// 0
}

// A runtime withdraws a ticket its host gave up on; a later approval
// runs nothing.
func ExampleGate_Cancel() {
	g, dana, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, exampleCall("finance@example.com"))
	tk, _ = g.Cancel(ctx, tk.ID, "the host timed out")
	fmt.Println(tk.Status, tk.Reason)
	_, err := stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	fmt.Println(errors.Is(err, stepup.ErrResolved))
	// Output:
	// cancelled the host timed out
	// true
}

// Maintain runs on every gate for its whole life: it takes over
// executions whose owner's lease expired and times out pending tickets.
func ExampleGate_Maintain() {
	g, _, _ := exampleGate()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Maintain(ctx, time.Second, func(err error) { fmt.Println("maintain:", err) }) }()
	stop()
	fmt.Println(errors.Is(<-done, context.Canceled))
	// Output: true
}

// A signed checkpoint of the audit head lets a third party verify an
// export that starts after it.
func ExampleAdmin_Checkpoint() {
	g, _, _ := exampleGate()
	ctx := context.Background()
	_, _ = g.Propose(ctx, exampleCall("finance@example.com"))
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	cp, err := g.Admin().Checkpoint(ctx, key)
	fmt.Println(cp.Seq, len(cp.Sig), err)
	entries, _, _ := g.Admin().List(ctx, store.Filter{States: []store.State{store.Pending}})
	fmt.Println(len(entries))
	// Output:
	// 1 64 <nil>
	// 1
}
