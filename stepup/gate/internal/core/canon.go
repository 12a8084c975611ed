package core

import (
	"context"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

// StoreGrants is package grant's coverage over the gate's store.
type StoreGrants struct{ St grant.Reader }

func (g StoreGrants) Target(ctx context.Context, id string, s canon.Sealed) (string, error) {
	return grant.Target(ctx, g.St, id, s)
}
