package stepup_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/sqlite"
)

// check stops the example on an error; a runtime treats a failed Propose
// as a denial and a failed Execute by its sentinel.
func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Example_mount shows a gate mounted behind a runtime: one store, a
// catalog, the passkey approver, an executor; the administrator's
// enrollment; the runtime's three calls; the approver's desk, with the
// default dwell. The approver's browser is played by stepuptest's fake
// authenticator, and the store's clock by a test clock, so the dwell
// passes without sleeping. The part between the README markers is the
// README's "How to mount it", verbatim (readme_test.go holds them equal).
func Example_mount() {
	ctx, stop := context.WithCancel(context.Background()) // stops Maintain when the example ends
	defer stop()
	dir, err := os.MkdirTemp("", "asu-mount-")
	check(err)
	defer os.RemoveAll(dir)
	clock := stepuptest.NewClock(stepuptest.Start())
	path := filepath.Join(dir, "asu.db")
	browser := stepuptest.NewAuthenticator("approve.example.com", "https://approve.example.com")

	// README: begin mount
	st, err := sqlite.Open(ctx, path, &sqlite.Options{Clock: clock.Now}) // nil options: the wall clock; postgres.Open for replicas
	check(err)
	defer st.Close()
	cat, err := policy.NewCatalog("2026-11-01.1",
		policy.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal,
			Schema:  json.RawMessage(`{"type":"object","required":["to"]}`),
			Limits:  []policy.Limit{policy.AllowDomains("to", "example.com")},
			Trusted: []string{"example.com"}}) // the card flags look-alikes such as exarnple.com
	check(err)
	rp := passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com"}
	key := []byte("32+ random bytes kept outside the database")    // replicas sharing the store share it
	approver, err := passkey.New(st, rp, passkey.RequireSeal(key)) // only credentials the enrollment sealed
	check(err)
	mailer := plug.ExecutorFunc(func(ctx context.Context, e canon.Effect, idem string) ([]byte, error) {
		return []byte(`{"sent":true}`), nil // send e.Args at most once per idem
	})
	g, err := gate.New(st, cat, approver, gate.WithExecutor("send_email", mailer), gate.WithKey(key))
	check(err)                                                // flood control and a 3 s dwell for external calls are on by default
	go g.Maintain(ctx, 0, func(err error) { log.Print(err) }) // take over runs a crashed replica left

	// The administrator (never the agent): a one-time invite that the
	// approver's browser redeems on the approval site to register a passkey.
	enroll, err := passkey.NewEnrollment(st, rp, passkey.WithSealKey(key))
	check(err)
	invite, err := enroll.Invite(ctx, "user:dana")
	check(err)
	creation, err := enroll.BeginEnroll(ctx, invite) // to navigator.credentials.create
	check(err)
	registration, err := browser.Register(creation)
	check(err)
	_, err = enroll.FinishEnroll(ctx, invite, registration)
	check(err)

	// The agent's side: all it ever gets.
	var rt stepup.Runtime = g // or remote.NewClient(url, token, nil) over HTTP
	tk, err := rt.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Task: "t-42", Step: "7", Session: "run-9",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Taint:     []string{"read web page https://example.org/offer"}})
	check(err)
	fmt.Println("proposed:", tk.Status) // the approver is notified out of band

	// The approver's side, on its own origin.
	desk := g.Desk()
	p, err := desk.Prompt(ctx, tk.ID) // p.Card (text, HTML, JSON); p.Options to navigator.credentials.get
	check(err)
	check(desk.Show(ctx, tk.ID)) // the card is on her screen: the dwell starts
	assertion, err := browser.Assert(p.Options)
	check(err)
	_, err = desk.Approve(ctx, tk.ID, assertion)
	fmt.Println("at once:", errors.Is(err, stepup.ErrTooFast)) // sooner than the dwell: read the card, sign again
	clock.Advance(gate.DefaultDwell)                           // she reads the card
	assertion, err = browser.Assert(p.Options)
	check(err)
	_, err = desk.Approve(ctx, tk.ID, assertion)
	check(err)

	// The agent's side again: wait with a deadline, never for the ticket's lifetime.
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tk, err = rt.Wait(waitCtx, tk.ID) // still pending at the deadline: tell the model it waits, resume later
	check(err)
	if tk.Status.Runnable() {
		res, err := rt.Execute(ctx, tk.ID) // no arguments: the STORED call runs, once
		fmt.Println("executed:", string(res.Output), err)
	} else {
		fmt.Println("not run:", tk.Reason, tk.RetryAfter) // back to the model as an observation
	}
	_, err = rt.Execute(ctx, tk.ID)
	fmt.Println("again:", errors.Is(err, stepup.ErrConsumed))
	rcpt, err := desk.Receipt(ctx, tk.ID) // verifiable offline with the approver's public key
	fmt.Println("receipt:", rcpt != nil, err)
	// README: end mount

	// Output:
	// proposed: pending
	// at once: true
	// executed: {"sent":true} <nil>
	// again: true
	// receipt: true <nil>
}
