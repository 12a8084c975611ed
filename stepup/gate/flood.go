package gate

import (
	"context"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
)

// Flood admits the calls that would prompt a person and learns how people
// decided them; *flood.Limiter is the default. Admit refuses with a
// *flood.LimitError (rate limited or locked out, with a retry time) or
// any other error, which the gate treats as a refusal.
type Flood interface {
	Admit(ctx context.Context, r flood.Request) error
	Decided(ctx context.Context, r flood.Request, approved bool) error
	// Caps bounds the live pending tickets per session and per user,
	// enforced by the store when it parks a ticket.
	Caps() store.Caps
}

// parkCaps is the stricter of caps and flood control's, field by field.
func parkCaps(caps store.Caps, f Flood) store.Caps {
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

// floodRequest is who a ticket's prompt comes from and goes to.
func floodRequest(a store.Approval, approvers []string) flood.Request {
	return flood.Request{User: a.User, Agent: a.Requester.Agent, Session: a.Session, Approvers: approvers}
}
