package desk

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Grant implements [gate.Desk.Grant].
func (d *Desk) Grant(ctx context.Context, user string, spec GrantSpec) (stepup.Ticket, error) {
	g := d.g
	if err := core.CheckPerson(user); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return stepup.Ticket{}, err
	}
	raw, err := spec.Grant.Marshal()
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	switch {
	case spec.Grant.Template != nil && spec.Grant.Template.User != user:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: a template must name the approver as its user", stepup.ErrConfig)
	case spec.Grant.Kind == grant.KindPlan && spec.Uses != 0:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: a plan's steps have one use each; uses must be zero", stepup.ErrConfig)
	case spec.Grant.Kind != grant.KindPlan && spec.Uses < 1:
		return stepup.Ticket{}, fmt.Errorf("grant: %w: uses must be at least one", stepup.ErrConfig)
	case !spec.ExpiresAt.Truncate(time.Second).After(now):
		return stepup.Ticket{}, fmt.Errorf("grant: %w: expiry must be in the future", stepup.ErrConfig)
	}
	args, err := json.Marshal(core.GrantArgs{Grant: raw, Uses: spec.Uses,
		ExpiresAt: spec.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339)})
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	dec := core.GrantDecision()
	sealed, err := canon.Seal(canon.Effect{Tool: plug.GrantTool, Args: args, Task: "grant", Principal: canon.Principal{User: user},
		PolicyVersion: dec.PolicyVersion, Audience: dec.Audience})
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: %v", stepup.ErrConfig, err)
	}
	cd, err := g.core.Render(sealed, dec, nil, "")
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: the card could not be rendered", stepup.ErrConfig)
	}
	a := store.Approval{Tool: plug.GrantTool, EffectClass: dec.Class, Effect: sealed.Bytes(), Digest: sealed.Digest(),
		CardHash: cd.Hash(), CreatedAt: now, ExpiresAt: now.Add(g.core.TTL), Requester: canon.Principal{User: user},
		User: user, Session: "grant:" + user, Task: "grant", PolicyVersion: dec.PolicyVersion}
	if a.Card, err = cd.JSON(); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w: the card could not be rendered", stepup.ErrConfig)
	}
	if _, err := rand.Read(a.Nonce[:]); err != nil {
		return stepup.Ticket{}, fmt.Errorf("grant: %w", err)
	}
	parked, _, err := g.core.St.Park(ctx, a, store.Caps{}, g.core.Note(receipt.DecisionNeedsApproval, dec.Reason, now))
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("grant", err)
	}
	g.core.Changed()
	g.core.ObserveDecided(ctx, parked, receipt.DecisionNeedsApproval, dec.Reason, now)
	return core.View(parked, now), nil
}
