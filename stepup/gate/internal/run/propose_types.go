package run

import (
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// proposal is one call on its way through Propose.
type proposal struct {
	c      stepup.Call
	a      store.Approval // the ticket it will be stored as
	sealed canon.Sealed
	d      plug.Decision
	quorum int        // how many people must approve, once routed
	card   *card.Card // rendered once, before flood control is asked
}

// SealEffect seals e, whose arguments are args. Canonicalization is
// canon's, on every path: the effect's digest is the protocol (P2), and a
// receipt verifies against canon's rules alone.
func (g *Gate) SealEffect(e canon.Effect, args canon.Value) (canon.Sealed, error) {
	return canon.SealArgs(e, args)
}
