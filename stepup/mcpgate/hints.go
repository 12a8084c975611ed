package mcpgate

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/card"
)

// SuggestClass turns an upstream tool's annotations into the effect class
// they suggest, taking the worst case wherever the hints are missing or
// contradict each other. The protocol calls these hints untrusted unless
// the server is, and a hostile server says whatever gets its tool run
// unattended, so the result is only ever a starting point for the
// integrator's catalog, never a decision.
//
//   - no annotations, or destructiveHint unset or true: irreversible
//     (the protocol's default for destructiveHint is true);
//   - readOnlyHint true, with destructiveHint not also true: read;
//   - otherwise openWorldHint unset or true: external; false: reversible.
//
// idempotentHint says nothing about how bad one call is, so it is ignored.
func SuggestClass(a *mcp.ToolAnnotations) string {
	if a == nil {
		return card.ClassIrreversible
	}
	destructiveSaid := a.DestructiveHint != nil && *a.DestructiveHint
	switch {
	case a.ReadOnlyHint && !destructiveSaid:
		return card.ClassRead
	case a.DestructiveHint == nil || destructiveSaid:
		return card.ClassIrreversible
	case a.OpenWorldHint == nil || *a.OpenWorldHint:
		return card.ClassExternal
	default:
		return card.ClassReversible
	}
}

// annotationsFor is what the gateway tells its host about a tool: hints
// derived from the class the catalog gives it, never copied from
// upstream. A tool outside the catalog gets the protocol's worst case.
func annotationsFor(class string) *mcp.ToolAnnotations {
	yes, no := true, false
	switch class {
	case card.ClassRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &no}
	case card.ClassReversible:
		return &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}
	case card.ClassExternal:
		return &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes}
	default:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
	}
}
