package grant

import "strings"

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeToken escapes one reference token (RFC 6901 section 3).
func escapeToken(s string) string { return tokenEscaper.Replace(s) }

// validPointer reports whether p is a JSON pointer: empty, or "/"-prefixed
// tokens in which "~" is always followed by "0" or "1".
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// tokens returns the number of reference tokens in the pointer p.
func tokens(p string) int { return strings.Count(p, "/") }

// arrayIndex reports whether the reference token t is an array index as
// RFC 6901 writes one: "0", or digits without a leading zero. A rule path
// token in that form addresses an array element, never an object member.
func arrayIndex(t string) bool {
	if t == "" || len(t) > 1 && t[0] == '0' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// ruleTree holds a template's rule paths as a tree of reference tokens, to
// find a path given twice or lying inside another in time linear in the
// paths' length: each token is hashed once, with the node it hangs from,
// where looking every proper prefix of a path up in a map would hash each
// prefix again (quadratic in the path).
type ruleTree struct {
	edges map[treeEdge]int32 // child node by parent node and token
	nodes []treeNode         // node 0 is the root, the pointer ""
	// work counts the token bytes hashed, which tests hold linear in the
	// total length of the paths.
	work int
}

type treeEdge struct {
	parent int32
	token  string // escaped, as written: escaping is one to one
}

type treeNode struct {
	rule     bool // a rule's path ends here
	children bool // a rule's path goes on below
}

func newRuleTree(rules int) *ruleTree {
	return &ruleTree{edges: make(map[treeEdge]int32, rules), nodes: make([]treeNode, 1, rules+1)}
}

// add adds the valid pointer p and reports why it cannot be a rule path
// beside those added before: "" when it can.
func (t *ruleTree) add(p string) ruleError {
	n := int32(0)
	for rest := p; rest != ""; {
		if t.nodes[n].rule {
			return "a rule's path lies inside another rule's"
		}
		t.nodes[n].children = true
		tok := rest[1:]
		if i := strings.IndexByte(tok, '/'); i >= 0 {
			tok, rest = tok[:i], tok[i:]
		} else {
			rest = ""
		}
		t.work += len(tok)
		e := treeEdge{parent: n, token: tok}
		child, ok := t.edges[e]
		if !ok {
			child = int32(len(t.nodes))
			t.nodes = append(t.nodes, treeNode{})
			t.edges[e] = child
		}
		n = child
	}
	switch {
	case t.nodes[n].rule:
		return "path repeated"
	case t.nodes[n].children:
		return "a rule's path lies inside another rule's"
	}
	t.nodes[n].rule = true
	return ""
}
