package gate

import (
	"context"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

// Canon seals a call into its canonical effect once, at Propose: the
// canonical bytes and digest the effect carries from then on, through the
// card, the grant check, the store and the executor. canon.Seal is the
// default; a Canon may refuse more (tighter size or depth bounds), but
// what it seals must be canon's canonical form, since Execute re-reads it
// with canon.ParseSealed. A Canon that also has a method
// SealArgs(e canon.Effect, args canon.Value) (canon.Sealed, error), as
// canon.SealArgs, is handed the arguments the gate already parsed and
// seals without reading them again.
type Canon interface {
	Seal(e canon.Effect) (canon.Sealed, error)
}

// Grants decides whether the delegated approval a call names covers it,
// and names the record whose use the call takes (the store takes it in
// the transaction that stores the call approved). It never takes a use
// itself. The default is grant.Target over the gate's store.
type Grants interface {
	Target(ctx context.Context, id string, s canon.Sealed) (string, error)
}

// defaultCanon is package canon's sealing.
type defaultCanon struct{}

func (defaultCanon) Seal(e canon.Effect) (canon.Sealed, error) { return canon.Seal(e) }

func (defaultCanon) SealArgs(e canon.Effect, args canon.Value) (canon.Sealed, error) {
	return canon.SealArgs(e, args)
}

// storeGrants is package grant's coverage over the gate's store.
type storeGrants struct{ st GrantStore }

func (g storeGrants) Target(ctx context.Context, id string, s canon.Sealed) (string, error) {
	return grant.Target(ctx, g.st, id, s)
}
