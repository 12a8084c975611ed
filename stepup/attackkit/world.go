package attackkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// waitBound bounds the kit's Wait calls: it only waits for tickets that
// were already decided.
const waitBound = 2 * time.Second

// kit is one attack's access to the adapter.
type kit struct {
	t       testing.TB
	adapter Adapter
	worlds  int
}

// world is one fresh integration and the tools it runs.
type world struct {
	Target
	c     *check
	tools *Tools
	lim   Limits
	n     int // calls made, for distinct steps
	id    int // this world's number within the attack, for distinct sessions
	// approved are the calls the user approved (or a grant covered), with
	// the digest of each ticket: everything that may run.
	approved []approval
	mu       sync.Mutex
	// seen is what the Runtime returned to the agent, as text.
	seen []string
}

type approval struct {
	call   stepup.Call
	ticket stepup.Ticket
}

// world builds a fresh integration, checking the adapter filled in what
// every attack needs.
func (k *kit) world(c *check) *world {
	tools := &Tools{}
	tg := k.adapter(k.t, tools)
	if tg.Runtime == nil || tg.People == nil {
		c.Errorf("the adapter returned a target without a Runtime or People")
		c.FailNow()
	}
	k.worlds++
	return &world{Target: tg, c: c, tools: tools, lim: tg.Limits.withDefaults(), id: k.worlds}
}

// session names the i-th session of this world.
func (w *world) session(i int) string { return fmt.Sprintf("kit-%d-%d", w.id, i) }

// email is a send_email call in session 0, with a step of its own.
func (w *world) email(to, subject string) stepup.Call {
	return w.call("send_email", args("to", to, "subject", subject, "body", "Quarterly figures attached."))
}

// refund is an issue_refund call in session 0, with a step of its own.
func (w *world) refund(orderID string, sum json.RawMessage) stepup.Call {
	return w.call("issue_refund", args("order", orderID, "amount", sum))
}

func (w *world) call(tool string, a json.RawMessage) stepup.Call {
	w.n++
	return stepup.Call{Tool: tool, Args: a, Task: "attack-kit", Step: fmt.Sprintf("s-%d", w.n),
		Session: w.session(0), Principal: canon.Principal{User: User, Agent: Agent}}
}

// propose proposes c. A propose error is a refusal: the ticket is denied.
func (w *world) propose(c stepup.Call) stepup.Ticket {
	tk, err := w.Runtime.Propose(w.c.ctx, c)
	w.saw(tk, nil, err)
	if err != nil {
		return stepup.Ticket{Status: stepup.StatusDenied, Reason: err.Error()}
	}
	return tk
}

// pending proposes c and requires it to wait for a person: the control
// that makes an attack on the ticket mean something.
func (w *world) pending(c stepup.Call) stepup.Ticket {
	tk := w.propose(c)
	if tk.Status != stepup.StatusPending || tk.ID == "" {
		w.c.Errorf("control: a %s call came back %s (%s), not pending: route send_email and issue_refund to a person",
			c.Tool, tk.Status, tk.Reason)
		w.c.FailNow()
	}
	return tk
}

// approve approves ticket tk of call c as User and requires the
// integration to accept it.
func (w *world) approve(tk stepup.Ticket, c stepup.Call) {
	if err := w.People.Approve(w.c.ctx, tk.ID, User); err != nil {
		w.c.Errorf("control: the user's own approval of ticket %s was refused: %v", tk.ID, err)
		w.c.FailNow()
	}
	if st := w.wait(tk.ID); !st.Status.Runnable() {
		w.c.Errorf("control: after the user's approval, ticket %s waits as %s, not runnable", tk.ID, st.Status)
		w.c.FailNow()
	}
	w.approved = append(w.approved, approval{call: c, ticket: tk})
}

// execute runs id and returns the error.
func (w *world) execute(id stepup.TicketID) error {
	res, err := w.Runtime.Execute(w.c.ctx, id)
	w.saw(stepup.Ticket{}, res.Output, err)
	return err
}

// wait returns ticket id's status once decided, or what it is after a
// short wait.
func (w *world) wait(id stepup.TicketID) stepup.Ticket {
	ctx, cancel := context.WithTimeout(w.c.ctx, waitBound)
	defer cancel()
	tk, err := w.Runtime.Wait(ctx, id)
	w.saw(tk, nil, err)
	return tk
}

// runsOnce requires call c, approved as ticket tk, to run exactly once
// when executed, and to run as approved.
func (w *world) runsOnce(tk stepup.Ticket, c stepup.Call) {
	if err := w.execute(tk.ID); err != nil {
		w.c.Errorf("control: executing approved ticket %s failed: %v", tk.ID, err)
		w.c.FailNow()
	}
	if n := w.tools.count(c); n != 1 {
		w.c.Errorf("control: the approved call ran %d times, want once", n)
		w.c.FailNow()
	}
	w.ranAsApproved()
}

// ranAsApproved requires every run to be one of the approved calls
// exactly and, when its ticket carries a digest, to hash to it: what ran
// is what was approved, byte for byte by digest.
func (w *world) ranAsApproved() {
runs:
	for _, r := range w.tools.Runs() {
		for _, a := range w.approved {
			if !r.same(a.call) {
				continue
			}
			if !a.ticket.Digest.IsZero() {
				if d, err := r.Effect.Digest(); err != nil || !d.Equal(a.ticket.Digest) {
					continue
				}
			}
			continue runs
		}
		w.c.Errorf("ran %s %s, which nobody approved as such", r.Effect.Tool, r.Effect.Args)
	}
}

// never requires call c never to have run.
func (w *world) never(c stepup.Call, why string) {
	if n := w.tools.count(c); n > 0 {
		w.c.Errorf("%s: %s %s ran %d times", why, c.Tool, c.Args, n)
	}
}

// nothingRan requires no tool to have run.
func (w *world) nothingRan(why string) {
	if runs := w.tools.Runs(); len(runs) > 0 {
		w.c.Errorf("%s: %d calls ran, the first %s %s", why, len(runs), runs[0].Effect.Tool, runs[0].Effect.Args)
	}
}

// concurrently runs f n times at once and returns how many returned nil.
func concurrently(n int, f func() error) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if f() == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return ok
}
