package desk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/run"
	"github.com/agentstepup/asu/stepup/internal/freetext"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Admin is the operator's side of a gate (package gate's Admin).
type Admin struct{ g *Gate }

// NewAdmin returns the operator's side of g.
func NewAdmin(g *run.Gate) *Admin { return &Admin{g: newGate(g)} }

// RevokeTicket implements [gate.Admin.RevokeTicket].
func (ad *Admin) RevokeTicket(ctx context.Context, id stepup.TicketID, by, reason string) (stepup.Ticket, error) {
	if by = freetext.Reason(by); by == "" {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w: name who revokes", stepup.ErrConfig)
	}
	return ad.g.revoke(ctx, id, by, reason)
}

// revoke moves an approved ticket to revoked with its audit row.
func (g *Gate) revoke(ctx context.Context, id stepup.TicketID, by, reason string) (stepup.Ticket, error) {
	a, _, err := g.core.Load(ctx, "revoke", id)
	if err != nil {
		return stepup.Ticket{}, err
	}
	switch a.State {
	case store.Approved:
	case store.Executing, store.Done, store.Failed, store.Abandoned:
		return stepup.Ticket{}, fmt.Errorf("revoke: %w", stepup.ErrConsumed)
	default:
		return stepup.Ticket{}, fmt.Errorf("revoke: %w: ticket is %s", stepup.ErrResolved, a.State)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	why := "revoked by " + by
	if reason = freetext.Reason(reason); reason != "" { // the reason never decides whether the revocation is made
		why += ": " + reason
	}
	done, err := g.core.St().Resolve(ctx, a.ID, store.Resolution{To: store.Revoked, Approver: a.Approver, Reason: why, At: now},
		g.core.Note(audit.DecisionRevoked, why, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("revoke", err)
	}
	g.core.Changed(a.ID)
	g.core.ObserveDecided(ctx, done, audit.DecisionRevoked, "revoked by "+by, now)
	return core.View(done, now), nil
}

// RevokeGrant implements [gate.Admin.RevokeGrant].
func (ad *Admin) RevokeGrant(ctx context.Context, id, by, reason string) error {
	g := ad.g
	if by = freetext.Reason(by); by == "" {
		return fmt.Errorf("revoke grant: %w: name who revokes", stepup.ErrConfig)
	}
	rec, err := g.core.St().GetGrant(ctx, id)
	if err != nil {
		return core.TicketErr("revoke grant", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return err
	}
	why := "grant " + id + " revoked by " + by
	if reason = freetext.Reason(reason); reason != "" {
		why += ": " + reason
	}
	err = g.core.St().RevokeGrant(ctx, id, now, func(store.Approval, bool) audit.Record {
		return audit.Record{TicketID: id, Task: "grant", Session: "grant:" + rec.User,
			Principal: core.PrincipalOf(rec.User), Decision: audit.DecisionRevoked, Reason: why, Approver: rec.User}
	})
	if err != nil {
		return core.TicketErr("revoke grant", err)
	}
	return nil
}

// List implements [gate.Admin.List].
func (ad *Admin) List(ctx context.Context, f store.Filter) ([]plug.Entry, string, error) {
	return ad.g.list(ctx, f, func(store.Approval, time.Time) bool { return true })
}

// List implements [gate.Desk.List].
func (d *Desk) List(ctx context.Context, approver string, f store.Filter) ([]plug.Entry, string, error) {
	if err := core.CheckPerson(approver); err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	if f.Session != "" {
		// A practice request differs from the real one it copies in its
		// session alone, among what a filter reads: a desk that filtered
		// by session would pick practice out (or leave it out) by it.
		return nil, "", fmt.Errorf("list: %w: the desk lists by state, user and group, not by the agent's session (Admin.List does)",
			stepup.ErrConfig)
	}
	return d.g.list(ctx, f, func(a store.Approval, now time.Time) bool {
		users, err := d.g.core.ApproversOf(ctx, a, now)
		return err == nil && slices.Contains(users, approver)
	})
}

// list reads one page of the tickets matching f and keeps those keep
// takes, as entries.
func (g *Gate) list(ctx context.Context, f store.Filter, keep func(a store.Approval, now time.Time) bool) ([]plug.Entry, string, error) {
	page, next, err := g.core.St().List(ctx, f)
	if err != nil {
		return nil, "", core.TicketErr("list", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return nil, "", err
	}
	out := make([]plug.Entry, 0, len(page))
	for _, a := range page {
		if keep(a, now) {
			out = append(out, entryOf(a, now))
		}
	}
	return out, next, nil
}

// MaxMetricsWindow bounds the window [Admin.Metrics] reads.
const MaxMetricsWindow = 31 * 24 * time.Hour

// Metrics implements [gate.Admin.Metrics].
func (ad *Admin) Metrics(ctx context.Context, window time.Duration) (figures.Report, error) {
	if window == 0 {
		window = 7 * 24 * time.Hour
	}
	if window < 0 || window > MaxMetricsWindow {
		return figures.Report{}, fmt.Errorf("%w: a metrics window is up to %v", stepup.ErrConfig, MaxMetricsWindow)
	}
	now, err := ad.g.core.Now(ctx)
	if err != nil {
		return figures.Report{}, err
	}
	rows, err := ad.g.core.St().AuditRange(ctx, now.Add(-window), now.Add(time.Millisecond))
	if err != nil {
		return figures.Report{}, core.TicketErr("metrics", err)
	}
	return figures.Compute(rows), nil
}

func entryOf(a store.Approval, now time.Time) plug.Entry {
	e := plug.Entry{Ticket: core.View(a, now), User: a.User, Agent: a.Requester.Agent, Approvers: a.Approvers,
		CreatedAt: a.CreatedAt}
	for _, v := range a.Votes {
		e.Approved = append(e.Approved, v.Approver)
	}
	return e
}

// Queue implements [gate.Desk.Queue].
func (d *Desk) Queue(ctx context.Context, approver string, limit int) ([]plug.Entry, error) {
	g := d.g
	if err := core.CheckPerson(approver); err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	if limit <= 0 || limit > store.MaxListLimit {
		limit = store.DefaultListLimit
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return nil, err
	}
	var groups []string
	for name, members := range g.core.Groups() {
		if slices.Contains(members, approver) {
			groups = append(groups, name)
		}
	}
	slices.Sort(groups)
	// A store reads at most store.MaxQueueGroups groups at once: an
	// approver in more is read a chunk at a time, each chunk's queue up to
	// the limit, and the chunks merged soonest expiry first, so no group
	// of theirs is left out.
	chunks := [][]string{nil}
	if len(groups) > 0 {
		chunks = slices.Collect(slices.Chunk(groups, store.MaxQueueGroups))
	}
	var out []plug.Entry
	for i, chunk := range chunks {
		q := store.QueueFilter{Groups: chunk, Now: now, Limit: limit}
		if i == 0 {
			q.User = approver
		}
		got, err := d.queue(ctx, approver, q, limit, now)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	if len(chunks) > 1 {
		slices.SortFunc(out, func(a, b plug.Entry) int {
			if c := a.Ticket.ExpiresAt.Compare(b.Ticket.ExpiresAt); c != 0 {
				return c
			}
			return strings.Compare(string(a.Ticket.ID), string(b.Ticket.ID))
		})
		out = slices.CompactFunc(out, func(a, b plug.Entry) bool { return a.Ticket.ID == b.Ticket.ID })
		out = out[:min(len(out), limit)]
	}
	return out, nil
}

// queue reads the candidates q selects, a page at a time, soonest expiry
// first, and returns up to limit of them that approver may decide at now.
func (d *Desk) queue(ctx context.Context, approver string, q store.QueueFilter, limit int, now time.Time) ([]plug.Entry, error) {
	g := d.g
	// The store reads the candidates a page at a time, soonest expiry
	// first; the policy and the votes are asked only about those, and a
	// page with some left out is followed by the next until the queue is
	// full or nothing is left.
	var out []plug.Entry
	for len(out) < limit {
		page, next, err := g.core.St().Queue(ctx, q)
		if err != nil {
			return nil, core.TicketErr("queue", err)
		}
		for _, a := range page {
			if slices.ContainsFunc(a.Votes, func(v store.Vote) bool { return v.Approver == approver }) {
				continue
			}
			users, err := g.core.ApproversOf(ctx, a, now)
			if err != nil || !slices.Contains(users, approver) {
				continue // its user when routed to a group, or policy changed
			}
			e := entryOf(a, now)
			g.entryProgress(ctx, a, &e, now)
			if out = append(out, e); len(out) == limit {
				break
			}
		}
		if next == "" {
			break
		}
		q.After = next
	}
	return out, nil
}

// RevokePrompt implements [gate.Desk.RevokePrompt].
func (d *Desk) RevokePrompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	a, req, now, err := d.revocable(ctx, id)
	if err != nil {
		return Prompt{}, err
	}
	opts, err := d.g.core.Approver().Options(ctx, req)
	if err != nil {
		return Prompt{}, fmt.Errorf("revoke: %w", err)
	}
	return Prompt{Ticket: core.View(a, now), CardJSON: a.Card, DenyOptions: opts, DenyChallenge: req.Challenge,
		Approvers: req.Approvers}, nil
}

// Revoke implements [gate.Desk.Revoke].
func (d *Desk) Revoke(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	a, req, _, err := d.revocable(ctx, id)
	if err != nil {
		return stepup.Ticket{}, err
	}
	v, err := d.g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w", err)
	}
	return d.g.revoke(ctx, id, v.User, reason)
}

// revocable reads approved ticket id and builds its deny request, which
// only someone who may decide the ticket now can answer.
func (d *Desk) revocable(ctx context.Context, id stepup.TicketID) (store.Approval, plug.Request, time.Time, error) {
	g := d.g
	a, _, err := g.core.Load(ctx, "revoke", id)
	if err != nil {
		return a, plug.Request{}, time.Time{}, err
	}
	if a.State != store.Approved {
		return a, plug.Request{}, time.Time{}, fmt.Errorf("revoke: %w: ticket is %s", stepup.ErrResolved, a.State)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return a, plug.Request{}, now, err
	}
	users, err := g.core.ApproversOf(ctx, a, now)
	if err != nil {
		return a, plug.Request{}, now, fmt.Errorf("revoke: %w", err)
	}
	return a, core.NewRequest(plug.ActionDeny, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, users), now, nil
}
