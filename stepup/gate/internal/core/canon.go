package core

import (
	"context"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup/plug"
)

// DefaultCanon is package canon's sealing.
type DefaultCanon struct{}

func (DefaultCanon) Seal(e canon.Effect) (canon.Sealed, error) { return canon.Seal(e) }

func (DefaultCanon) SealArgs(e canon.Effect, args canon.Value) (canon.Sealed, error) {
	return canon.SealArgs(e, args)
}

// StoreGrants is package grant's coverage over the gate's store.
type StoreGrants struct{ St plug.GrantStore }

func (g StoreGrants) Target(ctx context.Context, id string, s canon.Sealed) (string, error) {
	return grant.Target(ctx, g.St, id, s)
}
