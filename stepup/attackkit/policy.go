package attackkit

import (
	"fmt"

	"github.com/agentstepup/asu/stepup"
)

// policyChange approves a call, changes the integration's policy, and
// executes the approval, once and from several goroutines: an approval
// made under another policy version must not run (the call is proposed
// again under the new one). The same call, proposed and approved under
// the new policy, then runs once.
func policyChange(c *check, k *kit) {
	w := k.world(c)
	if w.ChangePolicy == nil {
		c.skip("the integration's policy cannot be changed (Target.ChangePolicy is nil)")
	}
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	if err := w.ChangePolicy(c.ctx); err != nil {
		c.Errorf("control: the policy could not be changed: %v", err)
		c.FailNow()
	}
	_ = w.execute(tk.ID)
	concurrently(4, func() error { return w.execute(tk.ID) })
	_ = w.execute(tk.ID)
	w.never(call, "an approval made under the previous policy ran after the policy changed")
	if c.failed() {
		return
	}
	again := w.email("finance@example.com", "Q3 summary")
	again.Session = w.session(1)
	ta := w.pending(again)
	w.approve(ta, again)
	w.runsOnce(ta, again)
	if n := w.tools.count(call); n != 1 {
		c.Errorf("after the policy changed, the call ran %d times on one new approval", n)
	}
}

// reaskDenied has the person deny a call, and the agent ask for it again:
// resumed as it is, proposed again in the same session (with its step
// and with new ones, with a new rationale) and in fresh sessions. No
// re-ask may run or come back runnable without a person's new answer;
// a re-ask the person then approves runs once.
func reaskDenied(c *check, k *kit) {
	w := k.world(c)
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	if err := w.People.Deny(c.ctx, tk.ID, User); err != nil {
		c.Errorf("control: the user could not deny ticket %s: %v", tk.ID, err)
		c.FailNow()
	}
	_ = w.execute(tk.ID)
	asks := []struct {
		name string
		call func() stepup.Call
	}{
		{"the same call, same step", func() stepup.Call { return call }},
		{"the same call, new step", func() stepup.Call { return w.email("finance@example.com", "Q3 summary") }},
		{"the same call, new rationale", func() stepup.Call {
			a := w.email("finance@example.com", "Q3 summary")
			a.Rationale = "The user changed her mind; she said yes in chat."
			return a
		}},
	}
	for i := range 3 {
		asks = append(asks, struct {
			name string
			call func() stepup.Call
		}{fmt.Sprintf("the same call in fresh session %d", i+1), func() stepup.Call {
			a := w.email("finance@example.com", "Q3 summary")
			a.Session = w.session(i + 1)
			return a
		}})
	}
	var pending []stepup.Ticket
	for _, ask := range asks {
		a := ask.call()
		again := w.propose(a)
		if again.Status.Runnable() {
			c.Errorf("%s, asked again after the user denied it, came back %s without her answer", ask.name, again.Status)
		}
		if again.ID == "" {
			continue
		}
		if st := w.peek(again.ID); st.Status.Runnable() && again.ID != tk.ID {
			c.Errorf("%s, asked again after the user denied it, became %s without her answer", ask.name, st.Status)
		}
		_ = w.execute(again.ID)
		if again.Status == stepup.StatusPending && again.ID != tk.ID {
			pending = append(pending, again)
		}
	}
	w.never(call, "a call the user denied, asked again")
	if c.failed() {
		return
	}
	if len(pending) == 0 {
		return // every re-ask was refused outright: nothing ran, which holds
	}
	last := pending[len(pending)-1]
	w.approve(last, call)
	if err := w.execute(last.ID); err != nil {
		c.Errorf("control: executing the re-ask the user approved failed: %v", err)
		return
	}
	if n := w.tools.count(call); n != 1 {
		c.Errorf("the re-ask the user approved ran %d times, want once", n)
	}
}
