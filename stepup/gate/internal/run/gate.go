// Package run is the runtime's side of a gate: Propose, Wait, Cancel,
// Execute and the shared work that keeps executions going (Recover,
// Sweep, Maintain). Package gate exports it; the engine it runs on is
// package core's.
package run

import (
	"sync"
	"time"

	"github.com/agentstepup/asu/stepup/gate/internal/core"
)

// Gate is the runtime's side of one gate.
type Gate struct {
	*core.Gate

	mu      sync.Mutex
	watched map[string]watched // expired executions Recover has seen, by ticket
}

// New returns the runtime side of e.
func New(e *core.Gate) *Gate { return &Gate{Gate: e, watched: map[string]watched{}} }

// watched is an expired execution as Recover first saw it.
type watched struct {
	fence      int64
	leaseUntil time.Time
	since      time.Time // by the gate's local clock
}
