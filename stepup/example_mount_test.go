package stepup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/sqlite"
)

// Example_mount shows a gate mounted behind a runtime: one store, a
// catalog, the passkey approver, an executor; the administrator's
// enrollment; the runtime's three calls; the approver's desk. The
// approver's browser is played by stepuptest's fake authenticator.
func Example_mount() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "asu-mount-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	cat, err := policy.NewCatalog("2026-11-01.1",
		policy.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal,
			Schema:  json.RawMessage(`{"type":"object","required":["to"]}`),
			Limits:  []policy.Limit{policy.AllowDomains("to", "example.com")},
			Trusted: []string{"example.com"}})
	if err != nil {
		log.Fatal(err)
	}
	rp := passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com"}
	key := []byte("32+ random bytes kept outside the database") // gate.WithKey, passkey seals
	approver, err := passkey.New(st, rp, passkey.RequireSeal(key))
	if err != nil {
		log.Fatal(err)
	}
	mailer := gate.ExecutorFunc(func(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
		return []byte(`{"sent":true}`), nil // use key to send at most once
	})
	g, err := gate.New(st, cat, approver, gate.WithExecutor("send_email", mailer), gate.WithKey(key),
		gate.WithDwell(0)) // approvals in this example come at once; a deployed gate keeps its dwell
	if err != nil {
		log.Fatal(err)
	}

	// Administrator (never reachable by the agent): a one-time invite,
	// redeemed by the approver's browser to register a passkey.
	enroll, err := passkey.NewEnrollment(st, rp, passkey.WithSealKey(key))
	if err != nil {
		log.Fatal(err)
	}
	browser := stepuptest.NewAuthenticator(rp.ID, rp.Origin)
	token, _ := enroll.Invite(ctx, "user:dana")
	creation, _ := enroll.BeginEnroll(ctx, token) // to navigator.credentials.create
	registration, _ := browser.Register(creation)
	if _, err := enroll.FinishEnroll(ctx, token, registration); err != nil {
		log.Fatal(err)
	}

	// Agent runtime: all it ever gets is stepup.Runtime.
	var rt stepup.Runtime = g // or remote.NewClient(url, token, nil) over HTTP
	tk, err := rt.Propose(ctx, stepup.Call{
		Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Task: "t-42", Step: "7", Session: "run-9",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Taint:     []string{"read web page https://example.org/offer"},
	})
	if err != nil {
		log.Fatal(err) // treat as denied
	}
	fmt.Println("proposed:", tk.Status)

	// Approver (own listener and origin): the card, the passkey, the answer.
	desk := g.Desk()
	p, err := desk.Prompt(ctx, tk.ID) // p.Card.HTML(); p.Options to navigator.credentials.get
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("who may approve:", p.Approvers)
	if err := desk.Show(ctx, tk.ID); err != nil { // the card is on screen: the dwell time starts
		log.Fatal(err)
	}
	assertion, _ := browser.Assert(p.Options)
	if _, err := desk.Approve(ctx, tk.ID, assertion); err != nil {
		log.Fatal(err)
	}

	waitCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	tk, _ = rt.Wait(waitCtx, tk.ID)
	fmt.Println("after approval:", tk.Status)
	if tk.Status.Runnable() {
		res, err := rt.Execute(ctx, tk.ID) // no arguments: the stored call runs, once
		fmt.Println("executed:", string(res.Output), err)
	} else {
		fmt.Println(tk.Reason, tk.RetryAfter) // back to the model as an observation
	}
	_, err = rt.Execute(ctx, tk.ID)
	fmt.Println("again:", err)
	rcpt, err := desk.Receipt(ctx, tk.ID) // verifiable offline with receipt.Verify
	fmt.Println("receipt:", rcpt != nil, err)
	// Output:
	// proposed: pending
	// who may approve: [user:dana]
	// after approval: approved
	// executed: {"sent":true} <nil>
	// again: execute: stepup: approval already used
	// receipt: true <nil>
}
