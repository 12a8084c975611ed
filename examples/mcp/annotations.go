package main

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/policy"
)

// suggestClass turns an upstream tool's annotations into the effect class
// they SUGGEST, taking the worst case wherever the hints are missing or
// contradict each other. It is a starting point for the integrator's
// review, never a catalog entry: the protocol calls these hints untrusted
// unless the server is, and a hostile server says whatever gets its tool
// run unattended.
//
//   - no annotations, or destructiveHint unset or true: irreversible
//     (the protocol's default for destructiveHint is true);
//   - readOnlyHint true, with destructiveHint not also true: read;
//   - otherwise openWorldHint unset or true: external; false: reversible.
//
// idempotentHint says nothing about how bad one call is, so it is ignored.
func suggestClass(a *mcp.ToolAnnotations) string {
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

// review is one line of the integrator's catalog review: what upstream
// suggests next to what the integrator set.
type review struct {
	Tool      string
	Suggested string // from the upstream annotations
	Confirmed string // from the integrator's catalog; empty: not admitted
}

func (r review) String() string {
	switch {
	case r.Confirmed == "":
		return fmt.Sprintf("%s: upstream suggests %s; not in the catalog, so every call is denied", r.Tool, r.Suggested)
	case r.Confirmed != r.Suggested:
		return fmt.Sprintf("%s: upstream suggests %s; the catalog says %s (kept)", r.Tool, r.Suggested, r.Confirmed)
	default:
		return fmt.Sprintf("%s: %s, as upstream suggests", r.Tool, r.Confirmed)
	}
}

// confirmCatalog joins an upstream server's tool listing with the entries
// the integrator wrote in code. The entries are authoritative: their class,
// schema and limits stand whatever upstream claims. From upstream each
// entry takes only its description, into stepup.Tool.Description, which
// the card shows in the untrusted region. It returns the catalog entries,
// the tools to offer (every upstream tool: those not admitted are offered
// and denied by the gate as unknown) and the review.
func confirmCatalog(upstream []*mcp.Tool, confirmed []policy.Tool) ([]policy.Tool, []gatedTool, []review, error) {
	byName := make(map[string]int, len(confirmed))
	for i, t := range confirmed {
		byName[t.Name] = i
	}
	entries := append([]policy.Tool(nil), confirmed...)
	tools := make([]gatedTool, 0, len(upstream))
	reviews := make([]review, 0, len(upstream))
	for _, u := range upstream {
		schema, err := objectSchema(u.InputSchema)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("upstream tool %q: %w", u.Name, err)
		}
		r := review{Tool: u.Name, Suggested: suggestClass(u.Annotations)}
		g := gatedTool{Name: u.Name, Description: u.Description, InputSchema: schema}
		if i, ok := byName[u.Name]; ok {
			entries[i].Description = u.Description
			r.Confirmed, g.Class = entries[i].Class, entries[i].Class
		}
		tools = append(tools, g)
		reviews = append(reviews, r)
	}
	return entries, tools, reviews, nil
}

// objectSchema re-encodes an upstream input schema, which must describe
// an object; a missing one accepts any object.
func objectSchema(schema any) (json.RawMessage, error) {
	if schema == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var s struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
		return nil, fmt.Errorf("input schema does not describe an object")
	}
	return raw, nil
}
