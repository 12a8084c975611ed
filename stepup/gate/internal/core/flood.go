package core

import (
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
)

// ParkCaps is the stricter of caps and flood control's, field by field.
func ParkCaps(caps store.Caps, f Flood) store.Caps {
	if f == nil {
		return caps
	}
	lc := f.Caps()
	return store.Caps{PerSession: stricter(caps.PerSession, lc.PerSession),
		PerUser: stricter(caps.PerUser, lc.PerUser)}
}

func stricter(a, b int) int {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// FloodRequest is who a ticket's prompt comes from and goes to, and
// where its effect goes (see [FloodTarget]).
func FloodRequest(a store.Approval, approvers []string, target flood.Target) flood.Request {
	return flood.Request{User: a.User, Agent: a.Requester.Agent, Session: a.Session, Approvers: approvers, Target: target}
}

// FloodTarget is where an effect goes outside the team, for flood
// control's limits keyed by the user and the target and its first-contact
// rule: the registrable domain of the first recipient its card does not
// mark trusted (the card's Summary, which folds every spelling of a host
// into its registrable domain). Recipients the operator trusts are its
// own, not a target; an effect with none else, or with no recipient
// argument at all, has no target.
func FloodTarget(recipients []card.SummaryDomain) flood.Target {
	for _, r := range recipients {
		if r.Trusted {
			continue
		}
		if t, err := flood.DomainTarget(r.Domain); err == nil {
			return t
		}
		// A host the constructor cannot read is still one target, never
		// none: the card names it in one spelling.
		return flood.NamedTarget("host", r.Domain)
	}
	return flood.Target{}
}

// StoredTarget is [FloodTarget] of the card stored with ticket a.
func StoredTarget(a store.Approval) flood.Target {
	r, err := card.RecipientsOfJSON(a.Card)
	if err != nil {
		return flood.Target{}
	}
	return FloodTarget(r)
}
