package attackkit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentstepup/asu/stepup"
)

// floodCalls is how many distinct calls a flooding agent proposes.
const floodCalls = 60

// floodCall is the i-th distinct call of a flood, alternating tools.
func (w *world) floodCall(i int) stepup.Call {
	if i%2 == 0 {
		return w.email("finance@example.com", fmt.Sprintf("Reminder %d", i))
	}
	return w.refund(fmt.Sprintf("F-%d", i), []byte("10"))
}

// floodSession proposes many distinct calls in one session without
// anyone answering: at most PendingPerSession may wait for a person.
func floodSession(c *check, k *kit) {
	w := k.world(c)
	waiting := map[stepup.TicketID]bool{}
	for i := range floodCalls {
		if tk := w.propose(w.floodCall(i)); tk.Status == stepup.StatusPending {
			waiting[tk.ID] = true
		}
	}
	if len(waiting) > w.lim.PendingPerSession {
		c.Errorf("%d of %d requests of one session wait for a person at once, over the bound of %d",
			len(waiting), floodCalls, w.lim.PendingPerSession)
	}
	if len(waiting) == 0 {
		c.Errorf("control: none of %d requests reached a person", floodCalls)
	}
	w.nothingRan("a flood")
}

// floodUser spreads a flood over many sessions of one user: at most
// PendingPerUser may wait for the user at once.
func floodUser(c *check, k *kit) {
	w := k.world(c)
	waiting := map[stepup.TicketID]bool{}
	sessions := 40
	for i := range 2 * sessions {
		call := w.floodCall(i)
		call.Session = w.session(i % sessions)
		if tk := w.propose(call); tk.Status == stepup.StatusPending {
			waiting[tk.ID] = true
		}
	}
	if len(waiting) > w.lim.PendingPerUser {
		c.Errorf("%d requests over %d sessions wait for one user at once, over the bound of %d",
			len(waiting), sessions, w.lim.PendingPerUser)
	}
	if len(waiting) == 0 {
		c.Errorf("control: none of %d requests reached a person", 2*sessions)
	}
	w.nothingRan("a flood")
}

// lockout has the user deny one request after another in one session:
// after LockoutAfter denials in a row, the next request must not reach
// her.
func lockout(c *check, k *kit) {
	w := k.world(c)
	for i := range w.lim.LockoutAfter + 1 {
		call := w.floodCall(i)
		var tk stepup.Ticket
		if i == 0 {
			tk = w.pending(call) // a session refused from the start shows no lockout
		} else {
			tk = w.propose(call)
		}
		if tk.Status != stepup.StatusPending {
			_ = w.execute(tk.ID)
			w.nothingRan("a refused request")
			return
		}
		if i == w.lim.LockoutAfter {
			break
		}
		if err := w.People.Deny(c.ctx, tk.ID, User); err != nil {
			c.Errorf("control: the user could not deny request %d: %v", i, err)
			c.FailNow()
		}
	}
	c.Errorf("after %d denials in a row the session's next request still reached the user", w.lim.LockoutAfter)
}

// provenance are what an agent read before proposing a call, in words the
// card may show.
var provenance = []string{
	"read web page https://example.org/offer",
	"read e-mail from attacker@evil.example",
	"output of tool search_tickets",
	"read file reports/untrusted.csv",
}

// duplicateMerge proposes a call, then the same call carrying new
// provenance or another rationale. A merged request must keep what the
// duplicate carried on the card; whatever was merged, one approval runs
// the call once.
func duplicateMerge(c *check, k *kit) {
	type variant struct {
		name      string
		taint     []string
		rationale string
	}
	var variants []variant
	variants = append(variants, variant{name: "an identical duplicate"})
	for _, p := range provenance {
		variants = append(variants, variant{name: "a duplicate after " + p, taint: []string{p}})
	}
	variants = append(variants,
		variant{name: "a duplicate with another rationale", rationale: "Also cc the auditors."},
		variant{name: "a duplicate with all the provenance", taint: provenance})
	for _, v := range variants {
		w := k.world(c)
		call := w.email("finance@example.com", "Q3 summary")
		first := w.pending(call)
		dup := call
		dup.Taint, dup.Rationale = v.taint, v.rationale
		second := w.propose(dup)
		merged := second.ID == first.ID
		if merged && (len(v.taint) > 0 || v.rationale != "") {
			viewer, ok := w.People.(Viewer)
			if !ok {
				c.Errorf("%s was merged into a request without it, and the card cannot be checked", v.name)
				continue
			}
			cd, err := viewer.View(c.ctx, first.ID)
			if err != nil {
				c.Errorf("control: the approver could not see ticket %s: %v", first.ID, err)
				continue
			}
			for _, p := range v.taint {
				if !strings.Contains(cd.Trusted, p) {
					c.Errorf("%s was merged and the card does not show it", v.name)
				}
			}
			if v.rationale != "" && !strings.Contains(cd.Trusted+cd.Untrusted, v.rationale) {
				c.Errorf("%s was merged and the card does not show it", v.name)
			}
		}
		w.approve(first, call)
		ids := []stepup.TicketID{first.ID}
		if second.ID != "" && !slices.Contains(ids, second.ID) {
			ids = append(ids, second.ID)
		}
		for _, id := range ids {
			_ = w.execute(id)
			_ = w.execute(id)
		}
		if n := w.tools.count(call); n != 1 {
			c.Errorf("%s: one approval ran the call %d times", v.name, n)
		}
	}
}
