// Package desk is the approvers' and the operator's side of a gate: the
// prompt, approvals, denials, revocations, grants, receipts and queues.
// Package gate exports it as gate.Desk and gate.Admin.
package desk

import "github.com/agentstepup/asu/stepup/gate/internal/run"

// Gate is a gate as its desk sees it: the runtime's side, whose shared
// work (timing out, issuing grants) a decision may need.
type Gate struct{ *run.Gate }
