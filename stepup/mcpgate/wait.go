package mcpgate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/stepup"
)

// flight is one pending ticket and the host calls waiting on it: the
// first call and identical ones of the same session that the gate merged
// into it. The ticket is withdrawn only when the last of them gives up,
// and it runs once, for all of them.
//
// Joining and the last leaver's withdrawal exclude each other: the last
// leaver marks the flight withdrawing under the proxy's lock and then
// calls the Canceller (a network call, made without the lock) with a
// context that a call joining meanwhile cancels, calling the withdrawal
// off. A Canceller that had already committed it, or a call the gate
// merged into the ticket just before it was withdrawn but that joins
// only after, finds the ticket withdrawn by a call that gave up while it
// had not: it proposes again, and waits on a fresh ticket.
type flight struct {
	refs  int
	gen   int                // withdrawals started
	abort context.CancelFunc // calls off the withdrawal under way; nil when none
	once  sync.Once
	res   *mcp.CallToolResult
}

// join adds a waiter to the flight of ticket id, calling off its
// withdrawal if one is under way.
func (p *Proxy) join(id stepup.TicketID) *flight {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.flights[id]
	if f == nil {
		f = &flight{}
		p.flights[id] = f
	}
	if f.abort != nil {
		f.abort()
		f.abort = nil
		p.log.Info("withdrawal called off: an identical call joined", "ticket", id)
	}
	f.refs++
	return f
}

// leave drops one waiter of flight f. When it was the last and withdraw
// is set, it marks the flight withdrawing and returns the context to
// withdraw the ticket with, which a joiner cancels, and the withdrawal's
// number for [Proxy.withdrawn].
func (p *Proxy) leave(id stepup.TicketID, f *flight, withdraw bool) (context.Context, int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f.refs--
	if f.refs > 0 {
		return nil, 0, false
	}
	if !withdraw {
		if p.flights[id] == f {
			delete(p.flights, id)
		}
		return nil, 0, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.abort = cancel
	f.gen++
	return ctx, f.gen, true
}

// withdrawn ends withdrawal gen of flight f: unless a joiner called it
// off, or a later withdrawal took over, the flight is gone.
func (p *Proxy) withdrawn(id stepup.TicketID, f *flight, gen int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.gen != gen || f.abort == nil {
		return
	}
	f.abort()
	f.abort = nil
	if f.refs == 0 && p.flights[id] == f {
		delete(p.flights, id)
	}
}

// withdrawnByAQuitter reports whether tk was withdrawn by an identical
// call of this proxy that gave up: a call still waiting proposes again.
func withdrawnByAQuitter(tk stepup.Ticket) bool {
	return tk.Status == stepup.StatusCancelled &&
		(strings.Contains(tk.Reason, ReasonHostCancelled) || strings.Contains(tk.Reason, ReasonNoDecision))
}

// await waits for a person to decide ticket tk, telling them where to,
// then runs it. The link goes to the person: as a URL elicitation when
// the host declared that mode, otherwise as a log message, with progress
// notifications at a steady interval for a host that asked for progress
// (so a host that resets its timeout on progress keeps waiting). When the
// host cancels or the wait ends first, the ticket is cancelled at once
// (unless an identical call still waits on it) and nothing runs later.
//
// again reports that the ticket was withdrawn by an identical call that
// gave up while this one had not: the caller proposes the call again.
func (p *Proxy) await(ctx context.Context, req *mcp.CallToolRequest, session string, tk stepup.Ticket) (res *mcp.CallToolResult, again bool) {
	f := p.join(tk.ID)
	p.o.OnPending(tk)
	wctx, cancelWait := context.WithTimeout(ctx, p.o.WaitTimeout)
	var wg sync.WaitGroup
	defer func() {
		cancelWait() // ends an elicitation the host has not answered
		wg.Wait()
	}()
	declined := make(chan struct{}, 1)
	elicited := p.tell(wctx, &wg, req, tk, declined)

	type waited struct {
		tk  stepup.Ticket
		err error
	}
	done := make(chan waited, 1)
	wg.Go(func() {
		t, err := p.rt.Wait(wctx, tk.ID)
		done <- waited{t, err}
	})
	tick := time.NewTicker(p.o.ProgressInterval)
	defer tick.Stop()
	token := req.Params.GetProgressToken()
	progress := 0.0
	var w waited
wait:
	for {
		select {
		case w = <-done:
			break wait
		case <-declined:
			p.cancel(context.Background(), tk.ID, ReasonDeclined)
		case <-tick.C:
			if token != nil {
				progress++
				_ = req.Session.NotifyProgress(wctx, &mcp.ProgressNotificationParams{ProgressToken: token,
					Progress: progress, Message: "waiting for a person to approve " + tk.Tool})
			}
		}
	}
	if elicited {
		_ = req.Session.NotifyElicitationComplete(context.WithoutCancel(ctx),
			&mcp.ElicitationCompleteParams{ElicitationID: string(tk.ID)})
	}
	gaveUp := w.err != nil
	wctxW, gen, last := p.leave(tk.ID, f, gaveUp)
	if gaveUp {
		why := ReasonNoDecision
		if ctx.Err() != nil {
			why = ReasonHostCancelled
		}
		if last {
			p.cancel(wctxW, tk.ID, why)
			p.withdrawn(tk.ID, f, gen)
		}
		if ctx.Err() == nil && !errors.Is(w.err, context.DeadlineExceeded) {
			return refused("not run: the gate could not report a decision"), false
		}
		return refused("not run: " + why), false
	}
	switch w.tk.Status {
	case stepup.StatusAllowed, stepup.StatusApproved, stepup.StatusExecuting, stepup.StatusExecuted:
		// Runnable, or being run by a joined call: its answer is ours too.
	default:
		if withdrawnByAQuitter(w.tk) {
			return nil, true
		}
		return refused(outcome(w.tk)), false
	}
	// The approval is spent by the first waiter to get here, for all of
	// them; it runs even if the host gives up meanwhile, as the person
	// approved it while the call was asked for.
	f.once.Do(func() { f.res = p.execute(context.WithoutCancel(ctx), session, tk.Tool, tk.ID) })
	return f.res, false
}

// tell sends the person the approval link and reports whether it went as
// a URL elicitation. A person who declines it has the ticket cancelled.
func (p *Proxy) tell(ctx context.Context, wg *sync.WaitGroup, req *mcp.CallToolRequest, tk stepup.Ticket, declined chan<- struct{}) bool {
	if p.o.ApprovalLink == nil || req.Session == nil {
		return false
	}
	link := p.o.ApprovalLink(tk.ID)
	msg := "Approve or deny " + tk.Tool + " with your passkey (digest " + tk.Digest.Short() + ")"
	logLink := func() {
		//lint:ignore SA1019 logging is how hosts without URL elicitation reach the person, and 2026-07-28 is not served
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "asu",
			Data: map[string]string{"message": msg, "url": link, "ticket": string(tk.ID)}})
	}
	if supportsURLElicitation(req.Session) {
		wg.Go(func() {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: msg, URL: link,
				ElicitationID: string(tk.ID)})
			switch {
			case err != nil && ctx.Err() == nil:
				logLink() // the host declared URL elicitation but failed it
			case err == nil && res.Action != "accept":
				declined <- struct{}{}
			}
		})
		return true
	}
	logLink()
	return false
}

func supportsURLElicitation(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil &&
		ip.Capabilities.Elicitation.URL != nil
}

// cancel withdraws ticket id, if a Canceller is set. A ticket decided
// first stays as decided; an approval that won that race runs nothing.
// ctx is cancelled when an identical call joins meanwhile.
func (p *Proxy) cancel(ctx context.Context, id stepup.TicketID, why string) {
	if p.o.Canceller == nil {
		return
	}
	_, err := p.o.Canceller.Cancel(ctx, id, why)
	switch {
	case errors.Is(err, stepup.ErrResolved):
		p.log.Warn("decided as the host gave up; not run", "ticket", id)
	case err != nil && ctx.Err() != nil:
		p.log.Info("not withdrawn: an identical call joined", "ticket", id)
	case err != nil:
		p.log.Warn("cancel failed", "ticket", id, "why", "store")
	default:
		p.log.Info("cancelled", "ticket", id, "why", why)
	}
}
