package core

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
	MaxNotifying  = 64
	notifyTimeout = 10 * time.Second
)

// NotifyParked tells the notifier, if any, that a waits for approvers.
func (g *Gate) NotifyParked(ctx context.Context, a store.Approval, approvers []string) {
	nt := g.cfg.Notifier
	if nt == nil {
		return
	}
	notice := notify.Notice{Ticket: a.ID, Tool: a.Tool, Class: a.EffectClass, User: a.User,
		Approvers: append([]string(nil), approvers...), ExpiresAt: a.ExpiresAt}
	select {
	case nt.Busy <- struct{}{}:
	default:
		g.logNotice(ctx, a, "notice dropped: too many in flight")
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() { <-nt.Busy }()
		timeout := notifyTimeout
		if g.cfg.PluginTimeout > 0 {
			timeout = g.cfg.PluginTimeout
		}
		nctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := safeNotify(nctx, nt, notice); err != nil {
			g.logNotice(ctx, a, "notice not sent: "+err.Error())
		}
	}()
}

// safeNotify makes the notice's link and hands it to the notifier,
// turning a panic of either into an error: a broken Notifier must not
// take the gate down. It runs on a goroutine of its own, never the
// decision's, and holds its slot of Busy until the notifier returns,
// even one that ignores its context: at most [MaxNotifying] such
// goroutines exist, and further notices are dropped (and logged) while
// they do. A notifier therefore never delays or changes a decision.
func safeNotify(ctx context.Context, nt *NotifyConfig, notice notify.Notice) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked", PluginNotifier) // its value may quote anything
		}
	}()
	notice.Link = nt.Link(stepup.TicketID(notice.Ticket))
	return nt.Notify.Notify(ctx, notice)
}

// logNotice logs a notice that could not be handed over; the message is
// the gate's or the Notifier's, and names no argument.
func (g *Gate) logNotice(ctx context.Context, a store.Approval, msg string) {
	if g.cfg.Obs == nil || g.cfg.Obs.Log == nil {
		return
	}
	g.cfg.Obs.Log.LogAttrs(ctx, slog.LevelWarn, msg, about(a)...)
}
