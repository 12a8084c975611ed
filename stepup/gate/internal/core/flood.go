package core

import (
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

// FloodRequest is who a ticket's prompt comes from and goes to.
func FloodRequest(a store.Approval, approvers []string) flood.Request {
	return flood.Request{User: a.User, Agent: a.Requester.Agent, Session: a.Session, Approvers: approvers}
}
