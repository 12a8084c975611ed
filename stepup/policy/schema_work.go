package policy

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// maxApplications bounds the subschemas checking one call may apply to any
// one value in its arguments. The validator evaluates a repeated or
// recursive $ref afresh every time it meets it, so a small schema whose
// subschemas each apply the next one twice costs time exponential in its
// size; the catalog refuses a schema that could pass this bound, and the
// work of checking arguments stays linear in their size. Ordinary schemas
// (generated models with $defs, trees with one self-reference a level) apply
// a few subschemas to each value; a thousand leaves them wide room.
const maxApplications = 1000

// maxSchemaDepth is how deep a value in the arguments the catalog checks
// can be: the root object at depth 0 and, under canon's nesting limit, a
// scalar in the innermost container at canon.DefaultMaxDepth.
const maxSchemaDepth = canon.DefaultMaxDepth

// maxDynamicAnchors bounds the $dynamicAnchor keywords of a schema whose
// $dynamicRef resolves dynamically: each is located by a compile of its
// own.
const maxDynamicAnchors = 100

// saturated stands for every count over maxApplications: counts stop
// there, so the bound's arithmetic never overflows.
const saturated = maxApplications + 1

// workNode is one compiled subschema and the subschemas it applies, split
// by what they apply to: the same value, or a value one level down.
type workNode struct {
	same     []int // $ref, allOf, anyOf, oneOf, not, if, then, else, dependent schemas, dynamic refs
	props    []int // properties: one member each
	anyProp  []int // patternProperties, additionalProperties, unevaluatedProperties: any member
	indexed  []int // prefixItems, positional items: one element each
	anyItem  []int // items, additionalItems, unevaluatedItems, contains: any element
	names    []int // propertyNames: each member name
	content  []int // contentSchema: a string's decoded content
	dynamic  string
	recursed bool // a $recursiveRef whose target has $recursiveAnchor
	linked   bool // its keywords have been read
}

// workGraph is the compiled schema as a graph of subschemas.
type workGraph struct {
	index map[*jsonschema.Schema]int
	sch   []*jsonschema.Schema
	node  []workNode
}

// newWorkGraph is the graph of the subschemas root reaches, root first.
func newWorkGraph(root *jsonschema.Schema) *workGraph {
	g := &workGraph{index: map[*jsonschema.Schema]int{}}
	g.id(root)
	g.link()
	return g
}

// link reads the keywords of every subschema met and not yet read,
// those it meets on the way included.
func (g *workGraph) link() {
	for i := 0; i < len(g.sch); i++ { // g.sch grows as subschemas are met
		if g.node[i].linked {
			continue
		}
		var n workNode
		g.add(&n, g.sch[i])
		n.linked = true
		g.node[i] = n
	}
}

// resolvesDynamically reports whether some subschema has a $dynamicRef
// whose target carries its anchor, so that the scope decides where it
// goes.
func (g *workGraph) resolvesDynamically() bool {
	for i := range g.node {
		if g.node[i].dynamic != "" {
			return true
		}
	}
	return false
}

func (g *workGraph) id(s *jsonschema.Schema) int {
	if i, ok := g.index[s]; ok {
		return i
	}
	g.index[s] = len(g.sch)
	g.sch = append(g.sch, s)
	g.node = append(g.node, workNode{})
	return len(g.sch) - 1
}

// add links the subschemas s applies into n. It reads every keyword of
// jsonschema v6 that applies a subschema.
func (g *workGraph) add(n *workNode, s *jsonschema.Schema) {
	one := func(to *[]int, t *jsonschema.Schema) {
		if t != nil {
			*to = append(*to, g.id(t))
		}
	}
	many := func(to *[]int, ts []*jsonschema.Schema) {
		for _, t := range ts {
			one(to, t)
		}
	}
	one(&n.same, s.Ref)
	one(&n.same, s.RecursiveRef)
	if s.RecursiveRef != nil && s.RecursiveRef.RecursiveAnchor {
		n.recursed = true
	}
	if d := s.DynamicRef; d != nil {
		one(&n.same, d.Ref)
		if d.Anchor != "" && d.Ref != nil && d.Ref.DynamicAnchor == d.Anchor {
			n.dynamic = d.Anchor
		}
	}
	many(&n.same, s.AllOf)
	many(&n.same, s.AnyOf)
	many(&n.same, s.OneOf)
	one(&n.same, s.Not)
	one(&n.same, s.If)
	one(&n.same, s.Then)
	one(&n.same, s.Else)
	for _, t := range s.DependentSchemas {
		one(&n.same, t)
	}
	for _, dep := range s.Dependencies {
		if t, ok := dep.(*jsonschema.Schema); ok {
			one(&n.same, t)
		}
	}
	for _, t := range s.Properties {
		one(&n.props, t)
	}
	for _, t := range s.PatternProperties {
		one(&n.anyProp, t)
	}
	if t, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		one(&n.anyProp, t)
	}
	one(&n.anyProp, s.UnevaluatedProperties)
	many(&n.indexed, s.PrefixItems)
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		one(&n.anyItem, items)
	case []*jsonschema.Schema:
		many(&n.indexed, items)
	}
	if t, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		one(&n.anyItem, t)
	}
	one(&n.anyItem, s.Items2020)
	one(&n.anyItem, s.UnevaluatedItems)
	one(&n.anyItem, s.Contains)
	one(&n.names, s.PropertyNames)
	one(&n.content, s.ContentSchema)
}

// checkSchemaWork refuses the compiled schema root, whose graph g holds
// (with the subschemas a $dynamicRef may resolve to that no keyword
// reaches), when checking one value could apply more than
// maxApplications subschemas to any one part of it, at any depth the
// arguments can reach.
//
// For each subschema s and depth j it bounds, from the compiled graph,
// apps(s, j): the subschemas that applying s to a value applies to one value
// j levels below (j = 0: the value itself). Keywords on the same value add
// up; keywords that move one level down add up by kind, and of the
// properties, prefixItems and positional items only the largest counts, as
// one member or element meets one of them. A $ref cycle that stays on one
// value applies subschemas without end. The work is linear in the graph's
// size times maxSchemaDepth, and counts stop at saturated.
func checkSchemaWork(tool string, root *jsonschema.Schema, g *workGraph) error {
	tooMuch := fmt.Errorf("%w: schema of %q: checking one value may apply more than %d subschemas to one part of it "+
		"(repeated or recursive $ref fan-out); simplify it", stepup.ErrConfig, tool, maxApplications)
	anchored := map[string][]int{}
	var names []int
	for i, s := range g.sch {
		if s.DynamicAnchor != "" {
			anchored[s.DynamicAnchor] = append(anchored[s.DynamicAnchor], i)
		}
		names = append(names, g.node[i].names...)
	}
	for i := range g.node {
		n := &g.node[i]
		if n.dynamic != "" {
			// The anchor in the outermost scope that has one wins; any of them may.
			n.same = append(n.same, anchored[n.dynamic]...)
		}
		if n.recursed {
			// The outermost scope in a resource with $recursiveAnchor wins: the
			// root, or the root of a fresh check of property names, when the
			// root has the anchor; any scope when it does not.
			if !root.RecursiveAnchor {
				return tooMuch
			}
			n.same = append(n.same, 0)
			n.same = append(n.same, names...)
		}
	}

	// Sinks first: a subschema comes after every subschema it applies to
	// the same value. What the root cannot reach is left out.
	reach := make([]bool, len(g.node))
	reach[0] = true
	stack := []int{0}
	for len(stack) > 0 {
		n := &g.node[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, list := range [][]int{n.same, n.props, n.anyProp, n.indexed, n.anyItem, n.names, n.content} {
			for _, t := range list {
				if !reach[t] {
					reach[t] = true
					stack = append(stack, t)
				}
			}
		}
	}
	pending := make([]int, len(g.node))
	applied := make([][]int, len(g.node)) // applied[t]: the subschemas that apply t to their own value
	reached := 0
	for i, n := range g.node {
		if !reach[i] {
			continue
		}
		reached++
		pending[i] = len(n.same)
		for _, t := range n.same {
			applied[t] = append(applied[t], i)
		}
	}
	order := make([]int, 0, reached)
	for i := range g.node {
		if reach[i] && pending[i] == 0 {
			order = append(order, i)
		}
	}
	for k := 0; k < len(order); k++ {
		for _, s := range applied[order[k]] {
			if pending[s]--; pending[s] == 0 {
				order = append(order, s)
			}
		}
	}
	if len(order) < reached {
		return tooMuch
	}

	below := make([]int, len(g.node)) // apps(s, j-1)
	here := make([]int, len(g.node))  // apps(s, j)
	for j := 0; j <= maxSchemaDepth; j++ {
		for _, i := range order {
			n := &g.node[i]
			a := 0
			if j == 0 {
				a = 1
			}
			for _, t := range n.same {
				a = add(a, here[t])
			}
			if j > 0 {
				down := max(
					add(sum(below, n.anyProp), largest(below, n.props)),
					add(sum(below, n.anyItem), largest(below, n.indexed)),
					sum(below, n.names),
					sum(below, n.content))
				a = add(a, down)
			}
			here[i] = a
		}
		if here[0] >= saturated {
			return tooMuch
		}
		below, here = here, below
	}
	return nil
}

func add(a, b int) int { return min(a+b, saturated) }

func sum(apps []int, of []int) int {
	s := 0
	for _, t := range of {
		s = add(s, apps[t])
	}
	return s
}

func largest(apps []int, of []int) int {
	m := 0
	for _, t := range of {
		m = max(m, apps[t])
	}
	return m
}

// dynamicAnchors returns the subschemas of doc, compiled as loc, that carry
// a $dynamicAnchor: where a $dynamicRef may resolve to, though no keyword
// reaches them. It refuses a schema with more than maxDynamicAnchors.
func dynamicAnchors(tool string, comp *jsonschema.Compiler, loc string, doc any) ([]*jsonschema.Schema, error) {
	type frame struct {
		v      any
		parent int
		tok    string
	}
	frames := []frame{{v: doc, parent: -1}}
	var found []int
	for i := 0; i < len(frames); i++ { // frames grows as values are met
		switch v := frames[i].v.(type) {
		case map[string]any:
			if _, ok := v["$dynamicAnchor"].(string); ok {
				if found = append(found, i); len(found) > maxDynamicAnchors {
					return nil, fmt.Errorf("%w: schema of %q has more than %d $dynamicAnchor keywords; simplify it",
						stepup.ErrConfig, tool, maxDynamicAnchors)
				}
			}
			for k, c := range v {
				frames = append(frames, frame{v: c, parent: i, tok: k})
			}
		case []any:
			for k, c := range v {
				frames = append(frames, frame{v: c, parent: i, tok: fmt.Sprint(k)})
			}
		}
	}
	var out []*jsonschema.Schema
	for _, i := range found {
		var toks []string
		for f := i; f > 0; f = frames[f].parent {
			toks = append(toks, frames[f].tok)
		}
		var frag strings.Builder
		for k := len(toks) - 1; k >= 0; k-- {
			tok := strings.ReplaceAll(strings.ReplaceAll(toks[k], "~", "~0"), "/", "~1")
			frag.WriteString("/" + url.PathEscape(tok))
		}
		// An anchor the schema's compile met is already compiled, and this
		// returns it; a location that is no subschema fails and is no target.
		if s, err := comp.Compile(loc + "#" + frag.String()); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}
