package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// A refund needs two people of the finance group; each approves the same
// ticket with their own passkey, and a third party checks both receipts.
func ExampleDesk_QuorumReceipt() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	cat, err := policy.NewCatalog("v1", policy.RequireQuorum(card.ClassIrreversible, 2,
		policy.Tool{Name: "issue_refund", Class: card.ClassIrreversible, Approvers: "finance"})...)
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, cat, stepuptest.Passkeys(st), gate.WithApproverGroup("finance", "user:dana", "user:erin"),
		gate.WithExecutor("issue_refund", plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			return []byte(`{"refunded":true}`), nil
		})))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	erin, _ := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:erin")
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":120}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	_ = g.Desk().Show(ctx, tk.ID) // Dana reads the card
	clock.Advance(gate.DefaultDwell)
	first, _ := stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)
	_ = g.Desk().Show(ctx, tk.ID) // then Erin does
	clock.Advance(gate.DefaultDwell)
	second, _ := stepuptest.Approve(ctx, g.Desk(), erin, tk.ID)
	fmt.Println(first.Status, second.Status)

	q, err := g.Desk().QuorumReceipt(ctx, tk.ID)
	if err != nil {
		panic(err)
	}
	var people []receipt.Person // from the enrollment records, never from the receipts
	for user, a := range map[string]*stepuptest.Authenticator{"user:dana": dana, "user:erin": erin} {
		k, _ := receipt.ParseCOSEKey(a.PublicKey(a.CredentialIDs()[0]))
		people = append(people, receipt.Person{User: user, Keys: []*receipt.TrustedKey{k}})
	}
	rp := stepuptest.RP()
	_, err = receipt.VerifyQuorum(q, people, 2, receipt.Policy{RPID: rp.ID, Origins: []string{rp.Origin}})
	fmt.Println(len(q.Receipts), err)
	// Output:
	// pending approved
	// 2 <nil>
}

// A test drives the gate's own waits (how long it watches an expired
// lease before taking the execution over) with the fake clock its store
// runs on; a deployed gate keeps the process's monotonic clock.
func ExampleWithLocalClock() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithLocalClock(clock.Now))
	if err != nil {
		panic(err)
	}
	clock.Advance(time.Hour)
	results, err := g.Recover(context.Background()) // nothing was running
	fmt.Println(len(results), err)
	// Output: 0 <nil>
}
