package grant

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathShape builds rule paths of about n bytes in all, in one shape the
// rule-path check must handle in time linear in n.
type pathShape struct {
	name  string
	paths func(n int) []string
}

var pathShapes = []pathShape{
	// One path as deep as a path may be, of long tokens.
	{"deep", func(n int) []string {
		tok := strings.Repeat("a", max(n/MaxPathTokens-1, 1))
		return []string{strings.Repeat("/"+tok, MaxPathTokens)}
	}},
	// Siblings under one long shared prefix.
	{"shared prefix", func(n int) []string {
		prefix := strings.Repeat("/p", 24)
		var out []string
		for i := 0; len(out) < MaxRules && (len(out)+1)*(len(prefix)+8) <= n; i++ {
			out = append(out, fmt.Sprintf("%s/s%05d", prefix, i))
		}
		return out
	}},
	// Many rules whose paths each go as deep as they may, in one token
	// chain with a leaf per level.
	{"chain", func(n int) []string {
		var out []string
		at := ""
		for len(out) < MaxRules && len(out) < MaxPathTokens && len(at)+16 <= n/8 {
			out = append(out, at+"/leaf")
			at += "/" + strings.Repeat("c", 14)
		}
		return out
	}},
	// Paths that differ only in their last token, by a byte that sorts
	// before "/" ("/a-b" between "/a" and "/a/c").
	{"near siblings", func(n int) []string {
		var out []string
		for i := 0; len(out) < MaxRules && (len(out)+1)*40 <= n; i++ {
			base := fmt.Sprintf("/k%04d", i)
			out = append(out, base+"-x/"+strings.Repeat("y", 20), base+"/z")
		}
		return out
	}},
}

func totalBytes(paths []string) int {
	n := 0
	for _, p := range paths {
		n += len(p)
	}
	return n
}

func treeWork(t *testing.T, paths []string) int {
	t.Helper()
	var rules []Rule
	for _, p := range paths {
		rules = append(rules, Pin(p, 1))
	}
	c, err := compile(Grant{Kind: KindTemplate, Template: &Template{Tool: "t", User: "u", Args: rules}})
	require.NoError(t, err)
	return c.work
}

// TestRulePathCheckIsLinear: checking that no rule path repeats or lies
// inside another hashes each byte of the paths at most once, at n bytes of
// paths and at 8n, so its work grows as the paths do. (Looking up every
// proper prefix of a path in a map hashes each prefix anew: a path of k
// tokens costs k²/2 tokens' bytes.) The work is counted, not timed.
func TestRulePathCheckIsLinear(t *testing.T) {
	for _, shape := range pathShapes {
		t.Run(shape.name, func(t *testing.T) {
			const n = 512
			small, large := shape.paths(n), shape.paths(8*n)
			require.NotEmpty(t, small)
			require.Greater(t, totalBytes(large), 4*totalBytes(small), "the shape grows")
			ws, wl := treeWork(t, small), treeWork(t, large)
			assert.LessOrEqual(t, ws, totalBytes(small), "work at n")
			assert.LessOrEqual(t, wl, totalBytes(large), "work at 8n")
			ratio := float64(wl) / float64(max(ws, 1))
			inputs := float64(totalBytes(large)) / float64(totalBytes(small))
			assert.LessOrEqual(t, ratio, inputs*1.2, "work grows ×%.1f for ×%.1f paths", ratio, inputs)
		})
	}
}

// nestedBrute is the definition the rule tree implements: a path given
// twice, or one lying inside another (the other a proper prefix ending at a
// token boundary; "" is every path's ancestor).
func nestedBrute(paths []string) bool {
	for i, p := range paths {
		for j, q := range paths {
			if i != j && (p == q || q == "" || strings.HasPrefix(p, q+"/")) {
				return true
			}
		}
	}
	return false
}

// TestRuleTreeMatchesDefinition: on generated rule paths over tokens that
// share prefixes, escapes and empty tokens, Validate refuses exactly the
// sets in which a path repeats or lies inside another.
func TestRuleTreeMatchesDefinition(t *testing.T) {
	toks := []string{"a", "ab", "a-b", "", "0", "~0", "~1", "~01", "b"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		var paths []string
		for range 1 + rng.IntN(5) {
			p := ""
			for range rng.IntN(4) {
				p += "/" + toks[rng.IntN(len(toks))]
			}
			paths = append(paths, p)
		}
		var rules []Rule
		for _, p := range paths {
			rules = append(rules, Pin(p, 1))
		}
		err := Grant{Kind: KindTemplate, Template: &Template{Tool: "t", User: "u", Args: rules}}.Validate()
		require.Equal(t, nestedBrute(paths), err != nil, "case %d: %q: %v", i, paths, err)
	}
}
