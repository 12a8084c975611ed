package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Admin is the operator's side of a gate: revoke approvals and grants,
// list tickets. Like [Desk], it is never handed to the agent runtime.
// Revoking passkeys and invites is enrollment's (package passkey).
type Admin struct{ g *Gate }

// Admin returns the gate's operator side.
func (g *Gate) Admin() *Admin { return &Admin{g: g} }

// Entry is a ticket as an approver's queue or an operator's listing shows
// it.
type Entry struct {
	Ticket stepup.Ticket
	// User is who the call runs on behalf of; Agent proposed it.
	User, Agent string
	// Approvers names the approver group the policy routed the ticket to;
	// empty means the ticket's user decides it.
	Approvers string
	CreatedAt time.Time
	// Approved lists who already approved a ticket that needs several
	// people ([Decision.Quorum]), in order.
	Approved []string
}

// RevokeTicket revokes approved ticket id before it runs, in the name of
// by (an operator or an approver, recorded in the audit row). A revoked
// approval never runs: Execute refuses it with [stepup.ErrRevoked]. A
// ticket already running or run fails with [stepup.ErrResolved] or
// [stepup.ErrConsumed].
func (ad *Admin) RevokeTicket(ctx context.Context, id stepup.TicketID, by, reason string) (stepup.Ticket, error) {
	if strings.TrimSpace(by) == "" {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w: name who revokes", stepup.ErrConfig)
	}
	return ad.g.revoke(ctx, id, by, reason)
}

// revoke moves an approved ticket to revoked with its audit row.
func (g *Gate) revoke(ctx context.Context, id stepup.TicketID, by, reason string) (stepup.Ticket, error) {
	a, err := g.load(ctx, "revoke", id)
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
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	why := "revoked by " + by
	if reason = strings.TrimSpace(reason); reason != "" {
		why += ": " + reason
	}
	done, err := g.st.Resolve(ctx, a.ID, store.Resolution{To: store.Revoked, Approver: a.Approver, Reason: why, At: now},
		g.note(receipt.DecisionRevoked, why, now))
	if err != nil {
		return stepup.Ticket{}, ticketErr("revoke", err)
	}
	g.changed()
	g.observeDecided(ctx, done, receipt.DecisionRevoked, "revoked by "+by, now)
	return view(done, now), nil
}

// RevokeGrant revokes grant id: from then on it covers no call, and calls
// naming it go to a person. by names who revoked it in the audit row.
func (ad *Admin) RevokeGrant(ctx context.Context, id, by, reason string) error {
	g := ad.g
	if strings.TrimSpace(by) == "" {
		return fmt.Errorf("revoke grant: %w: name who revokes", stepup.ErrConfig)
	}
	rec, err := g.st.GetGrant(ctx, id)
	if err != nil {
		return ticketErr("revoke grant", err)
	}
	now, err := g.now(ctx)
	if err != nil {
		return err
	}
	why := "grant " + id + " revoked by " + by
	if reason = strings.TrimSpace(reason); reason != "" {
		why += ": " + reason
	}
	err = g.st.RevokeGrant(ctx, id, now, func(store.Approval, bool) receipt.AuditRecord {
		return receipt.AuditRecord{TicketID: id, Task: "grant", Session: "grant:" + rec.User,
			Principal: principalOf(rec.User), Decision: receipt.DecisionRevoked, Reason: why, Approver: rec.User}
	})
	if err != nil {
		return ticketErr("revoke grant", err)
	}
	return nil
}

// List pages through the tickets matching f, newest state as stored. Pass
// the returned cursor as f.After for the next page; "" means the last.
func (ad *Admin) List(ctx context.Context, f store.Filter) ([]Entry, string, error) {
	g := ad.g
	page, next, err := g.st.List(ctx, f)
	if err != nil {
		return nil, "", ticketErr("list", err)
	}
	now, err := g.now(ctx)
	if err != nil {
		return nil, "", err
	}
	out := make([]Entry, 0, len(page))
	for _, a := range page {
		out = append(out, entryOf(a, now))
	}
	return out, next, nil
}

// MaxMetricsWindow bounds the window [Admin.Metrics] reads.
const MaxMetricsWindow = 31 * 24 * time.Hour

// Metrics returns the approval figures of the last window of the audit
// chain, by the store's clock (at most [MaxMetricsWindow]; zero means a
// week): per effect class and per approver, the approval rate, median and
// p90 time to decision, approvals per reviewer-hour, and the rubber-stamp
// warnings of receipt.Metrics. They show when a control has become a
// habit: an approval rate near 100% with decisions in a few seconds.
func (ad *Admin) Metrics(ctx context.Context, window time.Duration) (receipt.ApprovalMetrics, error) {
	if window == 0 {
		window = 7 * 24 * time.Hour
	}
	if window < 0 || window > MaxMetricsWindow {
		return receipt.ApprovalMetrics{}, fmt.Errorf("%w: a metrics window is up to %v", stepup.ErrConfig, MaxMetricsWindow)
	}
	now, err := ad.g.now(ctx)
	if err != nil {
		return receipt.ApprovalMetrics{}, err
	}
	rows, err := ad.g.st.AuditRange(ctx, now.Add(-window), now.Add(time.Millisecond))
	if err != nil {
		return receipt.ApprovalMetrics{}, ticketErr("metrics", err)
	}
	return receipt.Metrics(rows), nil
}

func entryOf(a store.Approval, now time.Time) Entry {
	e := Entry{Ticket: view(a, now), User: a.User, Agent: a.Requester.Agent, Approvers: a.Approvers,
		CreatedAt: a.CreatedAt}
	for _, v := range a.Votes {
		e.Approved = append(e.Approved, v.Approver)
	}
	return e
}

// Queue lists the pending, unexpired tickets approver may decide now,
// soonest expiry first, at most limit of them (0 means store's default
// page): the calls of their own agents that route to no group, and those
// routed to every group they are in. It never lists a ticket the
// approver requested, nor one that needs several people and that the
// approver already approved.
func (d *Desk) Queue(ctx context.Context, approver string, limit int) ([]Entry, error) {
	g := d.g
	if err := checkPerson(approver); err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	if limit <= 0 || limit > store.MaxListLimit {
		limit = store.DefaultListLimit
	}
	now, err := g.now(ctx)
	if err != nil {
		return nil, err
	}
	filters := []store.Filter{{States: []store.State{store.Pending}, User: approver}}
	for name, members := range g.groups {
		if slices.Contains(members, approver) {
			filters = append(filters, store.Filter{States: []store.State{store.Pending}, Approvers: name})
		}
	}
	seen := map[string]bool{}
	var out []Entry
	for _, f := range filters {
		for f.Limit = store.MaxListLimit; ; {
			page, next, err := g.st.List(ctx, f)
			if err != nil {
				return nil, ticketErr("queue", err)
			}
			for _, a := range page {
				if seen[a.ID] || !now.Before(a.ExpiresAt) ||
					slices.ContainsFunc(a.Votes, func(v store.Vote) bool { return v.Approver == approver }) {
					continue
				}
				users, err := g.approversOf(ctx, a, now)
				if err != nil || !slices.Contains(users, approver) {
					continue // its user when routed to a group, or policy changed
				}
				seen[a.ID] = true
				out = append(out, entryOf(a, now))
			}
			if next == "" {
				break
			}
			f.After = next
		}
	}
	slices.SortFunc(out, func(x, y Entry) int {
		if c := x.Ticket.ExpiresAt.Compare(y.Ticket.ExpiresAt); c != 0 {
			return c
		}
		return strings.Compare(string(x.Ticket.ID), string(y.Ticket.ID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// RevokePrompt returns what an approver of approved ticket id signs to
// revoke the approval before it runs: the ticket's deny request, which
// only someone who may decide the ticket can answer.
func (d *Desk) RevokePrompt(ctx context.Context, id stepup.TicketID) (Prompt, error) {
	g := d.g
	a, err := g.load(ctx, "revoke", id)
	if err != nil {
		return Prompt{}, err
	}
	if a.State != store.Approved {
		return Prompt{}, fmt.Errorf("revoke: %w: ticket is %s", stepup.ErrResolved, a.State)
	}
	now, err := g.now(ctx)
	if err != nil {
		return Prompt{}, err
	}
	users, err := g.approversOf(ctx, a, now)
	if err != nil {
		return Prompt{}, fmt.Errorf("revoke: %w", err)
	}
	req := newRequest(ActionDeny, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, users)
	opts, err := g.approver.Options(ctx, req)
	if err != nil {
		return Prompt{}, fmt.Errorf("revoke: %w", err)
	}
	return Prompt{Ticket: view(a, now), CardJSON: a.Card, DenyOptions: opts, DenyChallenge: req.Challenge,
		Approvers: users}, nil
}

// Revoke verifies answer, signed over approved ticket id's deny challenge
// ([Desk.RevokePrompt]) by someone who may decide the ticket, and revokes
// the approval before it runs.
func (d *Desk) Revoke(ctx context.Context, id stepup.TicketID, answer []byte, reason string) (stepup.Ticket, error) {
	g := d.g
	a, err := g.load(ctx, "revoke", id)
	if err != nil {
		return stepup.Ticket{}, err
	}
	if a.State != store.Approved {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w: ticket is %s", stepup.ErrResolved, a.State)
	}
	now, err := g.now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	users, err := g.approversOf(ctx, a, now)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w", err)
	}
	req := newRequest(ActionDeny, a.ID, a.Digest, a.Nonce, a.ExpiresAt, a.CardHash, users)
	v, err := g.verify(ctx, req, a, answer)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("revoke: %w", err)
	}
	return g.revoke(ctx, id, v.User, reason)
}
