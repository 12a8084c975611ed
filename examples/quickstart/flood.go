package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// floodResistance prints P7: an agent cannot wear Dana down by asking
// again and again. The gates here run with flood's default limits on the
// demo's database; each scene is another user's agent, so their limits do
// not mix.
func (d *demo) floodResistance(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nP7 flood resistance (flood's default limits):")
	naive, err := d.floodGate(gate.WithoutFloodControlUnsafe())
	if err != nil {
		return err
	}
	gate, err := d.floodGate()
	if err != nil {
		return err
	}
	replica, err := d.floodGate()
	if err != nil {
		return err
	}

	parked, _, err := d.proposeMany(ctx, naive, "user:erin", 1000)
	if err != nil {
		return err
	}
	d.line("1,000 requests from one session, naive", fmt.Sprintf("%d wait for Dana", parked))
	parked, denied, err := d.proposeMany(ctx, gate, "user:finn", 1000)
	if err != nil {
		return err
	}
	d.line("1,000 requests from one session", fmt.Sprintf("%d wait for Dana, %d denied", parked, denied))

	// An agent that asks again each time Dana answers is never capped by
	// the queue, only by the rate.
	reached := 0
	var last stepup.Ticket
	for i := range 100 {
		last, err = gate.Propose(ctx, floodCall("user:gus", i))
		if err != nil {
			return err
		}
		if last.Status != stepup.StatusPending {
			break
		}
		reached++
		if _, err := stepuptest.Approve(ctx, gate.Desk(), d.dana, last.ID); err != nil {
			return err
		}
	}
	d.line("asks again each time Dana approves", fmt.Sprintf("%d reach Dana, then %s", reached, refusal(last)))

	for i := range 3 {
		tk, err := gate.Propose(ctx, floodCall("user:hal", i))
		if err != nil {
			return err
		}
		if _, err := stepuptest.Deny(ctx, gate.Desk(), d.dana, tk.ID, "no"); err != nil {
			return err
		}
	}
	tk, err := gate.Propose(ctx, floodCall("user:hal", 3))
	if err != nil {
		return err
	}
	d.line("Dana denies 3 in a row; a 4th request", refusal(tk))
	tk, err = replica.Propose(ctx, floodCall("user:hal", 4))
	if err != nil {
		return err
	}
	d.line("the 4th through another gate, same store", refusal(tk))
	d.clock.Advance(15 * time.Minute)
	tk, err = replica.Propose(ctx, floodCall("user:hal", 5))
	if err != nil {
		return err
	}
	d.line("15 minutes later", string(tk.Status))
	return nil
}

// floodGate is a gate on the demo's database with flood's default limits
// unless opts say otherwise.
//
// Its send_email calls are approved by the finance group, Dana, for every
// user: by default only a call's own user may approve it.
func (d *demo) floodGate(opts ...gate.Option) (*gate.Gate, error) {
	tools := stepuptest.SeedTools()
	for i := range tools {
		if tools[i].Name == "send_email" {
			tools[i].Approvers = "finance"
		}
	}
	cat, err := policy.NewCatalog(stepuptest.SeedPolicyVersion, tools...)
	if err != nil {
		return nil, err
	}
	approver, err := passkey.New(d.st, stepuptest.RP())
	if err != nil {
		return nil, err
	}
	return gate.New(d.st, cat, approver, append([]gate.Option{gate.WithKey(demoKey), gate.WithExecutor("send_email", d.mail), gate.WithApproverGroup("finance", "user:dana"), gate.WithDwell(0)}, opts...)...)
}

// floodCall is the i-th distinct send_email of user's agent, all in one
// session of that user.
func floodCall(user string, i int) stepup.Call {
	return stepup.Call{Tool: "send_email", Task: "t-flood-" + user, Step: fmt.Sprintf("step-%d", i),
		Args:    json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","subject":"Q3 summary, try %d"}`, i)),
		Session: "session-" + user, Principal: canon.Principal{User: user, Agent: "agent:reports"}}
}

// proposeMany proposes n distinct calls of user's session and counts the
// tickets parked for Dana and the calls denied.
func (d *demo) proposeMany(ctx context.Context, g *gate.Gate, user string, n int) (parked, denied int, err error) {
	for i := range n {
		tk, err := g.Propose(ctx, floodCall(user, i))
		if err != nil {
			return 0, 0, err
		}
		switch tk.Status {
		case stepup.StatusPending:
			parked++
		case stepup.StatusDenied:
			denied++
		}
	}
	return parked, denied, nil
}

// refusal words a flood denial shortly: what refused it and when to retry.
func refusal(tk stepup.Ticket) string {
	if tk.Status != stepup.StatusDenied {
		return string(tk.Status)
	}
	kind, _, _ := strings.Cut(tk.Reason, ":")
	if tk.RetryAfter > 0 {
		return fmt.Sprintf("%s, retry after %v", kind, tk.RetryAfter)
	}
	return kind
}
