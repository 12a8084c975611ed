package memory

import "github.com/agentstepup/asu/store"

// share returns a copy of a that shares only its Effect and Card with it.
// Both are immutable once parked (see [store.Approval]): the store keeps
// the slices Park was given and hands the same ones to every reader, each
// capped at its length so that an append never writes into them. Every
// other slice (Evidence, Result, Taint, delegations, votes) is copied,
// since those change over a ticket's life. This is what lets Propose and
// Execute cost one copy of the effect rather than one per store call.
func share(a store.Approval) store.Approval {
	effect, card := a.Effect, a.Card
	a.Effect, a.Card = nil, nil
	b := a.Clone()
	if effect != nil {
		b.Effect = effect[:len(effect):len(effect)]
	}
	if card != nil {
		b.Card = card[:len(card):len(card)]
	}
	return b
}
