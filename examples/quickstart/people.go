package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// approversAsPeople prints what keeps approval from becoming a habit: the
// gate holds back an approval given before the card could be read (the
// dwell time), and an irreversible call waits for two different people
// (the rule of two). The gate here keeps its default dwell.
func (d *demo) approversAsPeople(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nApprovers are people (dwell time, rule of two):")
	erin, err := stepuptest.Enroll(ctx, d.enrol, "user:erin")
	if err != nil {
		return err
	}
	// The seed catalog, with refunds decided by the finance group and
	// every irreversible call needing two of them.
	tools := stepuptest.SeedTools()
	for i := range tools {
		if tools[i].Name == "issue_refund" {
			tools[i].Approvers = "finance"
		}
	}
	cat, err := policy.NewCatalog("people-1", policy.RequireQuorum(card.ClassIrreversible, 2, tools...)...)
	if err != nil {
		return err
	}
	approver, err := passkey.New(d.st, stepuptest.RP(), passkey.RequireSeal(demoKey))
	if err != nil {
		return err
	}
	g, err := gate.New(d.st, cat, approver, gate.WithKey(demoKey), gate.WithLocalClock(d.clock.Now),
		gate.WithApproverGroup("finance", "user:dana", "user:erin"),
		gate.WithExecutor("send_email", d.mail), gate.WithExecutor("issue_refund", d.mail))
	if err != nil {
		return err
	}
	desk := g.Desk()

	// Dwell: approving the instant the card appears is refused.
	tk, err := g.Propose(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	if err := desk.Show(ctx, tk.ID); err != nil {
		return err
	}
	d.clock.Advance(time.Second)
	_, err = stepuptest.Approve(ctx, desk, d.dana, tk.ID)
	d.line("Dana approves 1 s after the card appears", refusedAs(err, stepup.ErrTooFast, "refused: too soon, read it first"))
	d.clock.Advance(gate.DefaultDwell)
	done, err := stepuptest.Approve(ctx, desk, d.dana, tk.ID)
	if err != nil {
		return err
	}
	d.line("and again, 4 s after", string(done.Status))

	// The rule of two.
	refund := stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-17","amount":120}`),
		Task: "t-43", Step: "1", Session: "session-people", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	tk, err = g.Propose(ctx, refund)
	if err != nil {
		return err
	}
	if err := desk.Show(ctx, tk.ID); err != nil {
		return err
	}
	d.clock.Advance(gate.DefaultDwell)
	got, err := stepuptest.Approve(ctx, desk, d.dana, tk.ID)
	if err != nil {
		return err
	}
	d.line("refund of 120 EUR: Dana approves", string(got.Status)+", 1 of 2")
	_, err = g.Execute(ctx, tk.ID)
	d.line("the agent runs it now", refusedAs(err, stepup.ErrNotApproved, "refused: not approved"))
	if err := desk.Show(ctx, tk.ID); err != nil {
		return err
	}
	d.clock.Advance(gate.DefaultDwell)
	_, err = stepuptest.Approve(ctx, desk, d.dana, tk.ID)
	d.line("Dana approves again", refusedAs(err, stepup.ErrNotPermitted, "refused: the same person twice"))
	got, err = stepuptest.Approve(ctx, desk, erin, tk.ID) // the card has been on screen a while
	if err != nil {
		return err
	}
	before := d.mail.count()
	if _, err := g.Execute(ctx, tk.ID); err != nil {
		return err
	}
	d.line("Erin approves; the agent runs it", fmt.Sprintf("%s, ran %d time", got.Status, d.mail.count()-before))
	q, err := desk.QuorumReceipt(ctx, tk.ID)
	if err != nil {
		return err
	}
	d.line("receipts for a third party (verify quorum)", fmt.Sprintf("%d, one per approver, one challenge", len(q.Receipts)))
	return nil
}

// refusedAs names err as want's words, or says what it was instead.
func refusedAs(err, want error, words string) string {
	if errors.Is(err, want) {
		return words
	}
	return fmt.Sprintf("unexpected: %v", err)
}
