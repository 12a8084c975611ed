package stepup_test

import (
	"context"
	"encoding/json"
	"log"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/sqlite"
)

// Example_mount shows a gate mounted behind a runtime: one store, a
// catalog, flood limits, executors; the runtime's three calls; the
// approver's desk and grants; the administrator's enrollment.
func Example_mount() {
	ctx := context.Background()
	var mailer, payments gate.Executor // the tool backends
	var registration, assertion []byte // JSON from the approver's browser

	st, err := sqlite.Open("asu.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	cat, err := policy.NewCatalog("2026-11-01.1",
		policy.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal,
			Schema: json.RawMessage(`{"type":"object","required":["to"]}`),
			Limits: []policy.Limit{policy.AllowDomains("to", "example.com")}},
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Limits: []policy.Limit{policy.MaxAmount("amount", 500)}, Audience: "payments"},
	)
	if err != nil {
		log.Fatal(err)
	}
	// Optional: without WithFlood the gate uses flood's default limits.
	lim, err := flood.New(st, flood.Limits{Session: flood.Rate{N: 5, Per: 10 * time.Minute}}, time.Now)
	if err != nil {
		log.Fatal(err)
	}
	gate, err := gate.New(st, cat,
		passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com", Name: "Example approvals"},
		gate.WithFlood(lim),
		gate.WithExecutor("send_email", mailer),
		gate.WithExecutor("issue_refund", payments),
		gate.WithResolver(canon.FileResolver{Root: "files"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := gate.Recover(ctx); err != nil { // finish runs a crash interrupted
		log.Print(err)
	}

	// Administrator (never reachable by the agent): one-time invite, then
	// the approver registers a passkey with it.
	admin := gate.Admin()
	token, _ := admin.Invite(ctx, "user:dana")
	creation, _ := admin.BeginEnroll(ctx, token) // to navigator.credentials.create
	_, _ = admin.FinishEnroll(ctx, token, registration)
	_ = creation

	// Agent runtime: all it ever gets is stepup.Runtime.
	var rt stepup.Runtime = gate
	tk, err := rt.Propose(ctx, stepup.Call{
		Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Task: "t-42", Step: "7", Session: "run-9",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
		Taint:     []string{"read web page https://example.org/offer"},
	})
	if err != nil {
		log.Fatal(err) // treat as denied
	}
	if tk.Status == stepup.StatusPending {
		tk, _ = rt.Wait(ctx, tk.ID)
	}
	if tk.Status.Runnable() {
		res, err := rt.Execute(ctx, tk.ID)
		_, _ = res, err
	} else {
		log.Print(tk.Reason, tk.RetryAfter) // back to the model as an observation
	}

	// Approver (own listener and origin): the card, the passkey, the answer.
	desk := gate.Desk()
	p, _ := desk.Prompt(ctx, tk.ID) // p.Card.HTML(); p.Options to navigator.credentials.get
	_ = p
	_, _ = desk.Approve(ctx, tk.ID, assertion)
	_, _ = desk.Deny(ctx, tk.ID, "user:dana", "not this one")
	rcpt, _ := desk.Receipt(ctx, tk.ID) // verifiable offline with receipt.Verify
	_ = rcpt

	// A grant: Dana signs it with her passkey like any ticket; calls that
	// name it and that it covers exactly then run without asking her.
	g, _ := desk.Grant(ctx, "user:dana", gate.GrantSpec{
		Grant: grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
			Tool: "issue_refund", Audience: "payments", User: "user:dana",
			Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}},
		Uses: 3, ExpiresAt: time.Now().Add(8 * time.Hour)})
	_, _ = desk.Approve(ctx, g.ID, assertion) // after desk.Prompt(ctx, g.ID)
	_, _ = rt.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":80}`),
		Task: "t-43", Step: "1", Session: "run-10",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:support"}, Grant: string(g.ID)})

	// Periodically: apply timeouts nobody met.
	_, _ = gate.Sweep(ctx)
}
