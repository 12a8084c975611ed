package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// View turns a stored ticket into what the runtime sees at now.
func View(a store.Approval, now time.Time) stepup.Ticket {
	t := stepup.Ticket{ID: stepup.TicketID(a.ID), Tool: a.Tool, Digest: a.Digest, Reason: a.Reason, ExpiresAt: a.ExpiresAt}
	switch a.State {
	case store.Pending:
		t.Status = stepup.StatusPending
	case store.Approved:
		t.Status = stepup.StatusApproved
		if strings.HasPrefix(a.Approver, PolicyApprover) {
			t.Status = stepup.StatusAllowed
		}
		if !now.Before(a.ExpiresAt) {
			t.Status, t.Reason = stepup.StatusExpired, "approval expired before it was used"
		}
	case store.Denied:
		t.Status = stepup.StatusDenied
	case store.Expired:
		t.Status = stepup.StatusExpired
	case store.Cancelled:
		t.Status = stepup.StatusCancelled
	case store.Revoked:
		t.Status = stepup.StatusRevoked
	case store.Executing:
		t.Status = stepup.StatusExecuting
	case store.Done:
		t.Status = stepup.StatusExecuted
	case store.Failed:
		t.Status = stepup.StatusFailed
	case store.Abandoned:
		t.Status = stepup.StatusAbandoned
	default:
		t.Status, t.Reason = stepup.StatusDenied, "ticket in an unknown state"
	}
	return t
}

// AlternativeID is the id of the safe alternative proposed when ticket id
// times out. It is derived, not stored, so gates sharing a store agree on
// it and at most one of them can park it.
func AlternativeID(id string) string {
	h := sha256.Sum256([]byte("asu/v1/alternative\x00" + id))
	return hex.EncodeToString(h[:16])
}

// WithNext fills t.Next when a cancelled ticket was replaced by a safe
// alternative.
func (g *Gate) WithNext(ctx context.Context, t stepup.Ticket) stepup.Ticket {
	if t.Status != stepup.StatusCancelled {
		return t
	}
	alt := AlternativeID(string(t.ID))
	if _, err := g.St.Get(ctx, alt); err == nil {
		t.Next = stepup.TicketID(alt)
	}
	return t
}

// TicketErr maps a store refusal to the runtime's sentinels.
func TicketErr(op string, err error) error { return ticketstore.Err(op, err) }

// Render builds the approval card from the sealed effect and trusted
// context; the rationale is the only agent-written text on it.
func (g *Gate) Render(s canon.Sealed, d plug.Decision, taint []string, rationale string) (*card.Card, error) {
	reasons := []string{}
	if d.Reason != "" {
		reasons = append(reasons, d.Reason)
	}
	return g.Renderer.RenderSealed(s, card.Context{
		Title: d.Title, Class: d.Class, PolicyVersion: d.PolicyVersion,
		Reasons: reasons, Approvers: g.whoMayApprove(s.Principal().User, d), Provenance: taint, Hints: card.Hints(d.Hints),
		Trusted: d.Trusted, Rationale: rationale, ToolDescription: d.Description,
	})
}

// whoMayApprove words the route d gives a ticket of user, for the card:
// the user, or the approver group the policy names; how many people; and
// the group it escalates to. It names groups, not their members, so the
// card of a ticket renders the same for as long as its policy version
// stands.
func (g *Gate) whoMayApprove(user string, d plug.Decision) []string {
	out := []string{user + ", the user it runs on behalf of"}
	if d.Approvers != "" {
		out[0] = fmt.Sprintf("a member of approver group %q, never the agent that asked", d.Approvers)
	}
	if d.Quorum > 1 {
		out = append(out, fmt.Sprintf("%d different people must approve", d.Quorum))
	}
	if d.Timeout.Outcome == plug.OutcomeEscalate && d.Timeout.EscalateTo != "" {
		out = append(out, fmt.Sprintf("after %v without a decision, also a member of approver group %q",
			g.stage(d.Timeout), d.Timeout.EscalateTo))
	}
	return out
}

// Load reads ticket id and checks that the row agrees with the effect it
// stores: the tool, the user, the requester and the policy version the
// gate routes, authorizes and runs by are the effect's own, which the
// digest, and with it every approval's evidence, binds. A row edited to
// name another user or tool is refused as a changed action.
//
// It returns the stored effect parsed, so that what follows reads it
// without parsing it again.
func (g *Gate) Load(ctx context.Context, op string, id stepup.TicketID) (store.Approval, canon.Sealed, error) {
	a, err := g.St.Get(ctx, string(id))
	if err != nil {
		return a, canon.Sealed{}, TicketErr(op, err)
	}
	s, err := Consistent(a)
	if err != nil {
		return a, canon.Sealed{}, fmt.Errorf("%s: %w", op, err)
	}
	return a, s, nil
}

// Consistent reports whether ticket a's columns are its effect's, and
// returns the effect parsed.
func Consistent(a store.Approval) (canon.Sealed, error) {
	s, err := canon.ParseSealed(a.Effect)
	if err != nil || !s.Digest().Equal(a.Digest) {
		return canon.Sealed{}, fmt.Errorf("%w: the stored effect does not hash as recorded", stepup.ErrEffectChanged)
	}
	p := s.Principal()
	if s.Tool() != a.Tool || p.User != a.User || !samePrincipal(p, a.Requester) ||
		s.PolicyVersion() != a.PolicyVersion {
		return canon.Sealed{}, fmt.Errorf("%w: the stored ticket does not match its effect", stepup.ErrEffectChanged)
	}
	return s, nil
}

func samePrincipal(x, y canon.Principal) bool {
	return x.User == y.User && x.Agent == y.Agent && slices.Equal(x.Delegations, y.Delegations)
}

// Existing answers with a ticket another gate stored under a fixed id.
func (g *Gate) Existing(ctx context.Context, id string) (stepup.Ticket, error) {
	a, err := g.St.Get(ctx, id)
	if err != nil {
		return stepup.Ticket{}, TicketErr("propose", err)
	}
	now, err := g.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return View(a, now), nil
}
