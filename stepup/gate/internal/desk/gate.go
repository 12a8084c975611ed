// Package desk is the approvers' and the operator's side of a gate: the
// prompt, approvals, denials, revocations, grants, receipts and queues.
// Package gate exports it as gate.Desk and gate.Admin.
package desk

import "github.com/agentstepup/asu/stepup/gate/internal/run"

// Gate is a gate as its desk sees it: the runtime's side, whose shared
// work (timing out, issuing grants) a decision may need.
type Gate struct{ *run.Gate }

// NewDesk returns the approvers' side of g.
func NewDesk(g *run.Gate) *Desk { return &Desk{g: &Gate{g}} }

// NewAdmin returns the operator's side of g.
func NewAdmin(g *run.Gate) *Admin { return &Admin{g: &Gate{g}} }
