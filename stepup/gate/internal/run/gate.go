// Package run is the runtime's side of a gate: Propose, Wait, Cancel,
// Execute and the shared work that keeps executions going (Recover,
// Sweep, Maintain). Package gate exports it; the engine it runs on is
// package core's.
package run

import (
	"sync/atomic"

	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
)

// Gate is the runtime's side of one gate: it holds the gate's core, whose
// state it reaches only through the core's methods and settings.
type Gate struct {
	core *core.Gate

	watch  ticketstore.Watch      // expired executions Recover has seen
	notRun ticketstore.RefusalLog // refusals at execute written to the chain
	pruned atomic.Int64           // when Maintain last pruned counters, Unix nanoseconds by the store's clock; 0 for never
}

// New returns the runtime side of e.
func New(e *core.Gate) *Gate { return &Gate{core: e} }

// Core returns the gate's core, for the desk and the API over it.
func (g *Gate) Core() *core.Gate { return g.core }
