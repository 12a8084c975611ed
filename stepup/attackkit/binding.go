package attackkit

import (
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/stepup"
)

// substitute is one way of changing an approved call.
type substitute struct {
	name string
	edit func(c *stepup.Call)
}

// substitutes are the changes an attacker makes to an approved call: each
// a different effect from the one approved.
var substitutes = []substitute{
	{"another recipient", func(c *stepup.Call) { c.Args = setArg(c.Args, "to", "attacker@evil.example") }},
	{"a look-alike recipient", func(c *stepup.Call) { c.Args = setArg(c.Args, "to", "finance@exarnple.com") }},
	{"a Cyrillic look-alike recipient", func(c *stepup.Call) { c.Args = setArg(c.Args, "to", "finance@ex\u0430mple.com") }},
	{"a second recipient", func(c *stepup.Call) {
		c.Args = setArg(c.Args, "to", "finance@example.com,attacker@evil.example")
	}},
	{"another body", func(c *stepup.Call) { c.Args = setArg(c.Args, "body", "Wire 40,000 EUR to IBAN XX00 0000.") }},
	{"an added argument", func(c *stepup.Call) { c.Args = setArg(c.Args, "bcc", "attacker@evil.example") }},
	{"a duplicate key", func(c *stepup.Call) {
		c.Args = json.RawMessage(`{"to":"finance@example.com","to":"attacker@evil.example","subject":"Q3 summary","body":"x"}`)
	}},
	{"another tool", func(c *stepup.Call) {
		c.Tool, c.Args = "issue_refund", args("order", "A-17", "amount", json.RawMessage("400"))
	}},
	{"another user", func(c *stepup.Call) { c.Principal.User = Stranger }},
}

// substitution approves a call, has the tamper path rewrite it the way
// each substitute does, resumes, and requires that what ran (if anything)
// is exactly what was approved.
func substitution(by string, hook func(Target) Tamper) func(c *check, k *kit) {
	return func(c *check, k *kit) {
		for _, s := range substitutes {
			w := k.world(c)
			tamper := hook(w.Target)
			if tamper == nil {
				c.skip(fmt.Sprintf("the integration offers no %s path to tamper with", by))
			}
			call := w.email("finance@example.com", "Q3 summary")
			tk := w.pending(call)
			w.approve(tk, call)
			sub := call
			s.edit(&sub)
			if err := tamper(c.ctx, tk.ID, s.edit); err != nil {
				continue // the framework refused the edit itself
			}
			_ = w.execute(tk.ID)
			w.never(sub, fmt.Sprintf("after approval, %s changed the call to %s", by, s.name))
			w.ranAsApproved()
		}
	}
}

// resubmission approves a call, then resubmits each substitute for it.
func resubmission(c *check, k *kit) {
	for _, s := range substitutes {
		w := k.world(c)
		if w.Resubmit == nil {
			c.skip("the integration offers no way to resubmit a call's arguments (Target.Resubmit is nil)")
		}
		call := w.email("finance@example.com", "Q3 summary")
		tk := w.pending(call)
		w.approve(tk, call)
		sub := call
		s.edit(&sub)
		_, _ = w.Resubmit(c.ctx, tk.ID, sub)
		w.never(sub, fmt.Sprintf("after approval, resubmitting with %s", s.name))
		w.ranAsApproved()
	}
}

// transfer approves one call and tries to run each substitute, proposed
// as a call of its own, on the strength of it.
func transfer(c *check, k *kit) {
	w := k.world(c)
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	for i, s := range substitutes {
		other := call
		s.edit(&other)
		other.Session = w.session(i + 1)
		if ot := w.propose(other); ot.ID != "" {
			_ = w.execute(ot.ID)
		}
		w.never(other, fmt.Sprintf("one approval ran another call (%s)", s.name))
	}
	if c.failed() {
		return
	}
	w.runsOnce(tk, call)
}
