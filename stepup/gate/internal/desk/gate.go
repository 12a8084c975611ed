// Package desk is the approvers' and the operator's side of a gate: the
// prompt, approvals, denials, revocations, grants, receipts and queues.
// Package gate exports it as gate.Desk and gate.Admin.
package desk

import (
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/run"
)

// Gate is a gate as its desk sees it: its core, and the runtime's side,
// whose shared work (timing out, issuing grants) a decision may need.
type Gate struct {
	core *core.Gate
	run  *run.Gate
}

// newGate returns the desk's view of the runtime side r.
func newGate(r *run.Gate) *Gate { return &Gate{core: r.Core(), run: r} }
