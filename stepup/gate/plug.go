package gate

import (
	"github.com/agentstepup/asu/stepup/plug"
)

// The parts a gate is assembled from, and the values its desk hands out,
// are defined in package plug, so that a policy, an approver or a store
// implements them without importing the gate. They are named here too, so
// that a runtime mounting a gate imports one package.
type (
	// Policy is [plug.Policy].
	Policy = plug.Policy
	// Proposal is [plug.Proposal].
	Proposal = plug.Proposal
	// Verdict is [plug.Verdict].
	Verdict = plug.Verdict
	// Decision is [plug.Decision].
	Decision = plug.Decision
	// Outcome is [plug.Outcome].
	Outcome = plug.Outcome
	// Timeout is [plug.Timeout].
	Timeout = plug.Timeout
	// Route is [plug.Route].
	Route = plug.Route
	// Router is [plug.Router].
	Router = plug.Router
	// Approver is [plug.Approver].
	Approver = plug.Approver
	// Receipter is [plug.Receipter].
	Receipter = plug.Receipter
	// Action is [plug.Action].
	Action = plug.Action
	// Request is [plug.Request].
	Request = plug.Request
	// Verified is [plug.Verified].
	Verified = plug.Verified
	// Answer is [plug.Answer].
	Answer = plug.Answer
	// Judge is [plug.Judge].
	Judge = plug.Judge
	// Store is [plug.Store].
	Store = plug.Store
	// GrantStore is [plug.GrantStore].
	GrantStore = plug.GrantStore
	// AuditLog is [plug.AuditLog].
	AuditLog = plug.AuditLog
	// Canon is [plug.Canon].
	Canon = plug.Canon
	// Grants is [plug.Grants].
	Grants = plug.Grants
	// Flood is [plug.Flood].
	Flood = plug.Flood
	// Renderer is [plug.Renderer].
	Renderer = plug.Renderer
	// Executor is [plug.Executor].
	Executor = plug.Executor
	// ExecutorFunc is [plug.ExecutorFunc].
	ExecutorFunc = plug.ExecutorFunc
	// Prompt is [plug.Prompt].
	Prompt = plug.Prompt
	// Entry is [plug.Entry].
	Entry = plug.Entry
	// GrantSpec is [plug.GrantSpec].
	GrantSpec = plug.GrantSpec
	// Runnable is [plug.Runnable].
	Runnable = plug.Runnable
)

// Verdicts, timeout outcomes and actions: see package plug.
const (
	Allow              = plug.Allow
	Deny               = plug.Deny
	NeedsApproval      = plug.NeedsApproval
	OutcomeCancel      = plug.OutcomeCancel
	OutcomeEscalate    = plug.OutcomeEscalate
	OutcomeAlternative = plug.OutcomeAlternative
	ActionApprove      = plug.ActionApprove
	ActionDeny         = plug.ActionDeny
)

// The gate's own tools: see package plug.
const (
	GrantTool          = plug.GrantTool
	ReservedToolPrefix = plug.ReservedToolPrefix
	ExternalKeyPrefix  = plug.ExternalKeyPrefix
)

// ErrNoReceipt is [plug.ErrNoReceipt].
var ErrNoReceipt = plug.ErrNoReceipt

// ReservedTool is [plug.ReservedTool].
func ReservedTool(tool string) bool { return plug.ReservedTool(tool) }
