package attackkit

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
)

// pastAnyExpiry is how far the kit moves an integration's clock to put an
// approval past its expiry: longer than any approval window it assumes.
const pastAnyExpiry = 25 * time.Hour

// replay executes one approval again, in sequence and then from many
// goroutines at once: it must run exactly once.
func replay(c *check, k *kit) {
	w := k.world(c)
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	oks := 0
	for range 3 {
		if w.execute(tk.ID) == nil {
			oks++
		}
	}
	oks += concurrently(16, func() error { return w.execute(tk.ID) })
	if n := w.tools.count(call); n != 1 {
		c.Errorf("one approval ran %d times (19 executions, 16 of them at once)", n)
	}
	if oks > 1 {
		c.Errorf("%d executions of one approval reported success", oks)
	}
	w.ranAsApproved()

	// Proposed again, the same call needs a new approval.
	again := w.propose(call)
	if again.ID != "" {
		_ = w.execute(again.ID)
	}
	if n := w.tools.count(call); n != 1 {
		c.Errorf("the same call proposed again ran on the old approval (%d runs)", n)
	}
}

// replayAnswer captures the person's answer to one ticket and presents it
// for others: the same call proposed again, and a different call.
func replayAnswer(c *check, k *kit) {
	w := k.world(c)
	r, ok := w.People.(Replayer)
	if !ok {
		c.skip("the approver offers no way to present a captured answer (People is not a Replayer)")
	}
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	w.runsOnce(tk, call)

	targets := []stepup.Call{call, w.email("attacker@evil.example", "Q3 summary"), w.refund("A-17", []byte("400"))}
	for i, target := range targets {
		target.Session = w.session(i + 1)
		tt := w.propose(target)
		if tt.ID == "" || tt.ID == tk.ID {
			continue
		}
		_ = r.Replay(c.ctx, tk.ID, tt.ID)
		_ = w.execute(tt.ID)
	}
	if n := w.tools.count(call); n != 1 {
		c.Errorf("a replayed answer ran the approved call again (%d runs)", n)
	}
	for _, target := range targets[1:] {
		w.never(target, "a replayed answer approved another call")
	}
}

// expiry lets a pending ticket and an approved one outlive their window.
func expiry(c *check, k *kit) {
	w := k.world(c)
	if w.Advance == nil {
		c.skip("the integration's clock cannot be moved (Target.Advance is nil)")
	}
	pending := w.email("finance@example.com", "approved too late")
	tp := w.pending(pending)
	approved := w.refund("A-17", []byte("400"))
	approved.Session = w.session(1)
	ta := w.pending(approved)
	w.approve(ta, approved)

	w.Advance(pastAnyExpiry)
	_ = w.People.Approve(c.ctx, tp.ID, User)
	_ = w.execute(tp.ID)
	_ = w.execute(ta.ID)
	w.never(pending, fmt.Sprintf("a ticket approved %v after it was proposed ran", pastAnyExpiry))
	w.never(approved, fmt.Sprintf("an approval ran %v after it was given", pastAnyExpiry))
}

// revocation revokes approvals before they run, and races revocation
// against execution: a revocation that succeeded means the call never ran.
func revocation(c *check, k *kit) {
	w := k.world(c)
	rv, ok := w.People.(Revoker)
	if !ok {
		c.skip("the approver cannot revoke an approval (People is not a Revoker)")
	}
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	if err := rv.Revoke(c.ctx, tk.ID, User); err != nil {
		c.Errorf("control: the user could not revoke her own approval: %v", err)
		c.FailNow()
	}
	_ = w.execute(tk.ID)
	concurrently(4, func() error { return w.execute(tk.ID) })
	w.never(call, "a revoked approval")

	for i := range 12 {
		raced := w.refund(fmt.Sprintf("R-%d", i), []byte("100"))
		raced.Session = w.session(i + 1)
		rt := w.pending(raced)
		w.approve(rt, raced)
		var revoked, executed error
		done := make(chan struct{})
		go func() { revoked = rv.Revoke(c.ctx, rt.ID, User); close(done) }()
		executed = w.execute(rt.ID)
		<-done
		n := w.tools.count(raced)
		switch {
		case n > 1:
			c.Errorf("race %d: one approval ran %d times", i, n)
		case revoked == nil && n > 0:
			c.Errorf("race %d: the revocation succeeded and the call ran anyway", i)
		case revoked == nil && executed == nil:
			c.Errorf("race %d: both the revocation and the execution reported success", i)
		}
	}
}
