package gate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/store"
)

// Bounds on notifying: how many notices may be in a Notifier's hands at
// once (more are dropped and logged), and how long one may take.
const (
	maxNotifying  = 64
	notifyTimeout = 10 * time.Second
)

// WithNotifier has the gate tell approvers when a ticket needs a person:
// after a ticket is parked (not when an identical pending request merges
// into it), the gate hands n a [notify.Notice] naming the ticket, its tool
// and class, the user, the approvers and the expiry, and link(id): the
// approval site's page for the ticket ([gateway.ApprovalLink]). The link
// goes to the people who decide, never back to the agent, and the notice
// holds no arguments or challenge.
//
// Notifying never blocks or changes a decision: the gate calls n in the
// background, at most a few dozen notices at once (more are dropped and
// logged), each given ten seconds; an error is logged and the ticket
// stays in the approvers' queue. [notify.Webhook] is the built-in.
func WithNotifier(n notify.Notifier, link func(stepup.TicketID) string) Option {
	return func(g *Gate) error {
		if n == nil || link == nil {
			return fmt.Errorf("%w: a notifier needs a Notifier and a link function", stepup.ErrConfig)
		}
		g.notifier = &notifier{n: n, link: link, busy: make(chan struct{}, maxNotifying)}
		return nil
	}
}

// notifyParked tells the notifier, if any, that a waits for approvers.
func (g *Gate) notifyParked(ctx context.Context, a store.Approval, approvers []string) {
	nt := g.notifier
	if nt == nil {
		return
	}
	notice := notify.Notice{Ticket: a.ID, Tool: a.Tool, Class: a.EffectClass, User: a.User,
		Approvers: append([]string(nil), approvers...), ExpiresAt: a.ExpiresAt, Link: nt.link(stepup.TicketID(a.ID))}
	select {
	case nt.busy <- struct{}{}:
	default:
		g.logNotice(ctx, a, "notice dropped: too many in flight")
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() { <-nt.busy }()
		nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
		defer cancel()
		if err := safeNotify(nctx, nt.n, notice); err != nil {
			g.logNotice(ctx, a, "notice not sent: "+err.Error())
		}
	}()
}

// safeNotify calls n, turning a panic into an error: a broken Notifier
// must not take the gate down.
func safeNotify(ctx context.Context, n notify.Notifier, notice notify.Notice) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("notifier panicked: %v", r)
		}
	}()
	return n.Notify(ctx, notice)
}

// logNotice logs a notice that could not be handed over; the message is
// the gate's or the Notifier's, and names no argument.
func (g *Gate) logNotice(ctx context.Context, a store.Approval, msg string) {
	if g.obs == nil || g.obs.log == nil {
		return
	}
	g.obs.log.LogAttrs(ctx, slog.LevelWarn, msg, about(a)...)
}
