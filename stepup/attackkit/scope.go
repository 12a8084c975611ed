package attackkit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
)

// refundGrant is the delegated approval the kit asks for: refunds of
// order A-17 up to 120, by the kit's agent for the kit's user, run by the
// executor named issue_refund (an asu catalog's default audience is the
// tool's name).
func refundGrant() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "issue_refund", User: User, Agent: Agent,
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}}
}

// widenings are calls next to the grant's scope: each must go to a person
// or be refused, never run on the grant.
var widenings = []struct {
	name string
	edit func(c *stepup.Call)
}{
	{"an amount just over the bound", amount("120.0000001")},
	{"an amount ten times the bound", amount("1200")},
	{"an amount in exponent form", amount("1.21e2")},
	{"another order", order("A-18")},
	{"the order in lower case", order("a-17")},
	{"the order with a trailing space", order("A-17 ")},
	{"the order with a zero-width space", order("A-\u200b17")},
	{"an extra argument", func(c *stepup.Call) { c.Args = setArg(c.Args, "to_account", "X-9") }},
	{"another tool", func(c *stepup.Call) {
		c.Tool, c.Args = "send_email", args("to", "attacker@evil.example", "subject", "A-17", "body", "120")
	}},
	{"another user", func(c *stepup.Call) { c.Principal.User = Stranger }},
	{"a delegation added", func(c *stepup.Call) { c.Principal.Delegations = []string{"agent:helper"} }},
}

func amount(a string) func(c *stepup.Call) {
	return func(c *stepup.Call) { c.Args = setArg(c.Args, "amount", json.RawMessage(a)) }
}

func order(o string) func(c *stepup.Call) {
	return func(c *stepup.Call) { c.Args = setArg(c.Args, "order", o) }
}

// grantWidening has the user issue a grant for two refunds of A-17 up to
// 120, runs a covered call on it, then tries every widening, a use beyond
// the two, and (when the clock moves) a covered call after the grant
// expired: none may run without a person.
func grantWidening(c *check, k *kit) {
	w := k.world(c)
	gr, ok := w.People.(Granter)
	if !ok {
		c.skip("the integration has no delegated approvals (People is not a Granter)")
	}
	id, err := gr.Grant(c.ctx, User, refundGrant(), 2, 8*time.Hour)
	if err != nil {
		c.Errorf("control: the user could not issue a grant: %v", err)
		c.FailNow()
	}
	covered := func(amt string) stepup.Call {
		call := w.refund("A-17", json.RawMessage(amt))
		call.Grant = id
		return call
	}
	first := covered("100")
	runsOnGrant(w, first, true, "a call the grant covers")

	for i, wd := range widenings {
		call := covered("50")
		call.Session = w.session(i + 1)
		wd.edit(&call)
		runsOnGrant(w, call, false, "a call outside the grant ("+wd.name+")")
	}

	second := covered("60")
	second.Session = w.session(len(widenings) + 1)
	runsOnGrant(w, second, true, "the grant's second use")
	third := covered("70")
	third.Session = w.session(len(widenings) + 2)
	runsOnGrant(w, third, false, "a third use of a two-use grant")

	if w.Advance == nil {
		return
	}
	w2 := k.world(c)
	gr2 := w2.People.(Granter)
	id2, err := gr2.Grant(c.ctx, User, refundGrant(), 5, time.Hour)
	if err != nil {
		c.Errorf("control: the user could not issue a grant: %v", err)
		return
	}
	w2.Advance(2 * time.Hour)
	late := w2.refund("A-17", json.RawMessage("100"))
	late.Grant = id2
	runsOnGrant(w2, late, false, "a covered call after the grant expired")
}

// runsOnGrant proposes call and executes it. With want, the call must run
// at once, exactly once and as proposed (the control); without, it must
// not be runnable without a person and must not run.
func runsOnGrant(w *world, call stepup.Call, want bool, what string) {
	tk := w.propose(call)
	if want {
		if !tk.Status.Runnable() {
			w.c.Errorf("control: %s came back %s (%s), not runnable", what, tk.Status, tk.Reason)
			w.c.FailNow()
		}
		w.approved = append(w.approved, approval{call: call, ticket: tk})
		w.runsOnce(tk, call)
		return
	}
	if tk.Status.Runnable() {
		w.c.Errorf("%s came back %s without asking a person", what, tk.Status)
	}
	if tk.ID != "" {
		_ = w.execute(tk.ID)
	}
	w.never(call, fmt.Sprintf("%s ran on the grant", what))
}
