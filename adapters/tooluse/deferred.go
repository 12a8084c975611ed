package tooluse

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Deferred is what a host keeps about a tool call that waits for a
// person, so that it answers the model's call once, when the call is
// decided, rather than answering "waits" now and again later. It names
// the model's call and the gate's ticket, never the arguments: the gate
// runs the call it stored. It marshals to JSON, for a host that parks
// the conversation in its own store.
//
// The deferred flow: when [Gate.Run] (or an SDK helper built on it)
// answers [Pending], do not send its text to the model; keep
// [Outcome.Deferred], tell the person out of band (the approval link
// names the ticket), and hold the model's turn. Once the person decided,
// [Gate.ResumeDeferred] waits, executes the ticket if it may run, and
// returns an outcome whose CallID is the original call's: the SDK helpers
// turn it into the tool result for that call id, the only answer the
// model sees for it.
type Deferred struct {
	// CallID is the model's id of the call that waits.
	CallID string `json:"call_id"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Ticket is the gate's ticket of the call.
	Ticket stepup.TicketID `json:"ticket"`
}

// Deferred returns what to keep of a call that waits for a person; ok is
// false unless o is [Pending] with a ticket.
func (o Outcome) Deferred() (d Deferred, ok bool) {
	if o.State != Pending || o.Ticket.ID == "" {
		return Deferred{}, false
	}
	tool := o.Tool
	if tool == "" {
		tool = o.Ticket.Tool
	}
	return Deferred{CallID: o.CallID, Tool: tool, Ticket: o.Ticket.ID}, true
}

// ResumeDeferred is [Gate.Resume] for a deferred call: it waits up to
// [Options.Wait] for d's ticket, executes it if it may run, and returns
// the outcome with d's call id and tool, so the answer goes to the
// model's original call. Still [Pending], the call stays deferred.
func (g *Gate) ResumeDeferred(ctx context.Context, d Deferred) Outcome {
	ctx = orBackground(ctx)
	if o, no := g.unready(d.CallID, d.Tool); no {
		o.Ticket.ID = d.Ticket
		return g.observe(ctx, o)
	}
	o, _ := g.resume(ctx, d.Ticket)
	o.CallID = d.CallID
	if o.Tool == "" {
		o.Tool = d.Tool
	}
	if o.State != Pending {
		g.waiting.forget(d.Ticket)
	}
	return g.observe(ctx, o)
}

// maxWaiting bounds the calls a Gate remembers as waiting, for joining
// retries; the oldest is forgotten first, and a forgotten call's retry
// is only proposed again (the gate then merges it or asks anew).
const maxWaiting = 4096

// waiting remembers the calls that wait for a person by everything the
// gate stores of them but the step, so that a model that writes the
// same call again under a new call id joins the ticket it already has.
// The key is a hash of the call in its scope: the same key means the
// gate stored exactly this call, for this user, agent, session, task,
// provenance, rationale and grant.
type waiting struct {
	mu    sync.Mutex
	ids   map[[32]byte]*joinable
	keys  map[stepup.TicketID][32]byte
	order [][32]byte
}

// joinable is one waiting call's ticket, as the retries that join it
// hold it: they keep it after it is forgotten, to learn whether this
// Gate ran it while they waited.
type joinable struct {
	id stepup.TicketID
	// executed is set before a resume of this Gate executes the ticket.
	// From then on the approval is spent by this Gate, whatever the run
	// gives, and a retry that joined the ticket is told so rather than
	// proposed anew.
	executed atomic.Bool
}

// joinKey is the key of call c, or false when its arguments are not
// canonical JSON (the gate refuses such a call anyway).
func joinKey(c stepup.Call) ([32]byte, bool) {
	args, err := canon.Canonicalize(c.Args)
	if err != nil {
		return [32]byte{}, false
	}
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(c.Tool)
	field(string(args))
	field(c.Task)
	field(c.Session)
	field(c.Principal.User)
	field(c.Principal.Agent)
	field(c.Rationale)
	field(c.Grant)
	for _, l := range [][]string{c.Principal.Delegations, c.Taint} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		for _, s := range l {
			field(s)
		}
	}
	var k [32]byte
	h.Sum(k[:0])
	return k, true
}

// lookup returns the waiting ticket of key k, or nil.
func (w *waiting) lookup(k [32]byte) *joinable {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ids[k]
}

func (w *waiting) remember(k [32]byte, id stepup.TicketID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ids == nil {
		w.ids, w.keys = map[[32]byte]*joinable{}, map[stepup.TicketID][32]byte{}
	}
	if _, ok := w.ids[k]; ok {
		return
	}
	for len(w.ids) >= maxWaiting && len(w.order) > 0 {
		old := w.order[0]
		w.order = w.order[1:]
		if j, ok := w.ids[old]; ok {
			delete(w.keys, j.id)
			delete(w.ids, old)
		}
	}
	w.ids[k], w.keys[id] = &joinable{id: id}, k
	w.order = append(w.order, k)
	if len(w.order) > 2*maxWaiting { // drop the keys forgotten meanwhile
		live := w.order[:0]
		for _, ok := range w.order {
			if _, in := w.ids[ok]; in {
				live = append(live, ok)
			}
		}
		w.order = live
	}
}

func (w *waiting) forget(id stepup.TicketID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k, ok := w.keys[id]; ok {
		delete(w.ids, k)
		delete(w.keys, id)
		// order keeps the key until it reaches the front; a stale key
		// there deletes nothing.
	}
}

// executing marks ticket id, if it waits here, as executed by this Gate.
func (w *waiting) executing(id stepup.TicketID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k, ok := w.keys[id]; ok {
		w.ids[k].executed.Store(true)
	}
}

// peekWait bounds the status read of a joined ticket in [Gate.Propose].
const peekWait = 50 * time.Millisecond

// joined answers request r in scope s from the ticket a previous call
// with the same content is waiting on, if there is one: resumed (waited
// on and executed if it may run) when run is set, else only read.
//
// Once this join, or any resume of this Gate, has executed the ticket,
// the answer is what became of it (ran, failed, may have run, spent, not
// run), never a new proposal: proposing the call again would ask the
// person anew for a call that ran, or may have, and run it twice under
// another idempotency key. Likewise when the ticket's own state says the
// call ran or may have. ok is false only when no such ticket is known, or
// when it was decided otherwise, spent elsewhere or gone before this
// Gate executed it: the call is then proposed as a new request, which
// the gate decides (and its flood limits count) anew.
func (g *Gate) joined(ctx context.Context, s Scope, r Request, run bool) (o Outcome, ok bool) {
	k, keyed := joinKey(s.Call(r))
	if !keyed {
		return Outcome{}, false
	}
	j := g.waiting.lookup(k)
	if j == nil {
		return Outcome{}, false
	}
	executed := false
	if run {
		o, executed = g.resume(ctx, j.id)
	} else {
		o = g.peek(ctx, j.id)
	}
	// j.executed is read after the ticket: a resume marks it before it
	// executes, so a ticket seen running here was marked by then.
	if !executed && !j.executed.Load() && !answers(o.State) {
		g.waiting.forget(j.id)
		return Outcome{}, false
	}
	if o.State != Pending {
		g.waiting.forget(j.id)
	}
	o.CallID, o.Joined = r.ID, true
	if o.Tool == "" {
		o.Tool = r.Name
	}
	return o, true
}

// answers reports whether a joined ticket in state st answers the retry
// however it got there: it still waits or may run, or its call ran or
// may have.
func answers(st State) bool {
	switch st {
	case Pending, Runnable, Ran, Failed, Unknown:
		return true
	}
	return false
}

// peek reads ticket id's state without running it.
func (g *Gate) peek(ctx context.Context, id stepup.TicketID) Outcome {
	o := Outcome{Ticket: stepup.Ticket{ID: id}, State: Pending}
	wctx, cancel := context.WithTimeout(ctx, peekWait)
	tk, err := g.rt.Wait(wctx, id)
	ended := wctx.Err() != nil
	cancel()
	if tk.ID != "" {
		o.Ticket = tk
	}
	o.Tool = o.Ticket.Tool
	switch {
	case tk.ID == "" && err != nil && ended:
		// Not read in time: nothing says the ticket is decided, so the
		// retry stays joined to it rather than proposed anew.
	case tk.ID == "" && err != nil:
		o.State = NotRun
	default:
		o.State = decided(tk.Status)
	}
	return o
}

// waits remembers the ticket of outcome o of request r in scope s if it
// waits for a person.
func (g *Gate) waits(s Scope, r Request, o Outcome) {
	if o.State != Pending || o.Ticket.ID == "" {
		return
	}
	if k, ok := joinKey(s.Call(r)); ok {
		g.waiting.remember(k, o.Ticket.ID)
	}
}
