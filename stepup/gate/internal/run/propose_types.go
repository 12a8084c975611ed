package run

import (
	"github.com/agentstepup/asu/canon"
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
	quorum int // how many people must approve, once routed
}

// ArgsSealer is a [Canon] that seals parsed arguments.
type ArgsSealer interface {
	SealArgs(e canon.Effect, args canon.Value) (canon.Sealed, error)
}

// SealEffect seals e, whose arguments are args, with the gate's Canon.
func (g *Gate) SealEffect(e canon.Effect, args canon.Value) (canon.Sealed, error) {
	if s, ok := g.Canon.(ArgsSealer); ok {
		return s.SealArgs(e, args)
	}
	return g.Canon.Seal(e)
}
