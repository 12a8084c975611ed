package grant_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

func templateOf(rules ...grant.Rule) grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana", Args: rules}}
}

// nest returns {"k":{"k":...v...}} with depth objects, the pointer of v
// and the JSON.
func nest(key string, depth int, v string) (string, string) {
	path := strings.Repeat("/"+key, depth)
	args := strings.Repeat(`{"`+key+`":`, depth) + v + strings.Repeat("}", depth)
	return path, args
}

// TestRulePathLimits: a rule path of MaxPathBytes bytes and one of
// MaxPathTokens tokens are valid and cover the argument they name; one
// byte or one token more is refused with ErrInvalidGrant.
func TestRulePathLimits(t *testing.T) {
	deep, deepArgs := nest("k", grant.MaxPathTokens, "1")
	long := "/" + strings.Repeat("x", grant.MaxPathBytes-1)
	atLimit := []struct {
		name, path, args string
	}{
		{"tokens", deep, deepArgs},
		{"bytes", long, `{"` + long[1:] + `":1}`},
		{"bytes escaped", "/" + strings.Repeat("~1", (grant.MaxPathBytes-1)/2),
			`{"` + strings.Repeat("/", (grant.MaxPathBytes-1)/2) + `":1}`},
	}
	for _, tt := range atLimit {
		t.Run(tt.name, func(t *testing.T) {
			require.LessOrEqual(t, len(tt.path), grant.MaxPathBytes)
			g := templateOf(grant.Pin(tt.path, 1))
			require.NoError(t, g.Validate())
			cov, err := grant.Covers(g, refund(tt.args))
			require.NoError(t, err)
			assert.True(t, cov.Covered, "%+v", cov)
		})
	}
	overDeep, _ := nest("k", grant.MaxPathTokens+1, "1")
	for name, path := range map[string]string{
		"tokens":        overDeep,
		"bytes":         long + "x",
		"bytes escaped": "/" + strings.Repeat("~0", grant.MaxPathBytes/2),
		"empty tokens":  strings.Repeat("/", grant.MaxPathTokens+1),
	} {
		t.Run("over/"+name, func(t *testing.T) {
			err := templateOf(grant.Pin(path, 1)).Validate()
			assert.ErrorIs(t, err, grant.ErrInvalidGrant)
			_, err = grant.Covers(templateOf(grant.Pin(path, 1)), refund(`{}`))
			assert.ErrorIs(t, err, grant.ErrInvalidGrant)
		})
	}
}

// TestArgumentsPastPathLimitAreNotWalked: an argument whose pointer is
// longer than MaxPathBytes is not covered, and the walk stops there rather
// than building a pointer of that length for every level below it: the
// allocations of a coverage check do not grow with the nesting under a
// long name.
func TestArgumentsPastPathLimitAreNotWalked(t *testing.T) {
	key := strings.Repeat("n", grant.MaxPathBytes)
	g := templateOf(grant.Pin("/ok", 1))
	allocs := map[int]float64{}
	for _, depth := range []int{1, 8, 60} {
		s, err := canon.Seal(refund(`{"ok":1,"` + key + `":` + strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) + `}`))
		require.NoError(t, err)
		cov, err := grant.CoversSealed(g, s)
		require.NoError(t, err)
		assert.Equal(t, grant.ReasonUnpinned, cov.Reason)
		assert.Equal(t, "/"+key, cov.Path)
		allocs[depth] = testing.AllocsPerRun(20, func() { _, _ = grant.CoversSealed(g, s) })
	}
	assert.Equal(t, allocs[1], allocs[60], "allocations by depth under a long name: %v", allocs)
}

// TestArrayIndexTokenNamesArrayElementsOnly: a rule path token in
// array-index form names an element of an array, the container the rule
// was written against; an object member of that name, at any level, is
// not covered by it. Other tokens (a leading zero, a sign, letters) still
// name object members.
func TestArrayIndexTokenNamesArrayElementsOnly(t *testing.T) {
	for _, idx := range []int{0, 1, 7, 10, 123} {
		for _, depth := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%d/depth%d", idx, depth), func(t *testing.T) {
				outer, _ := nest("o", depth, "")
				path := outer + "/items/" + fmt.Sprint(idx)
				elems := strings.Repeat(`"A",`, idx) + `"A"`
				rules := []grant.Rule{grant.Pin(path, "A")}
				for i := range idx {
					rules = append(rules, grant.Pin(outer+"/items/"+fmt.Sprint(i), "A"))
				}
				g := templateOf(rules...)
				_, asArray := nest("o", depth, `{"items":[`+elems+`]}`)
				cov, err := grant.Covers(g, refund(asArray))
				require.NoError(t, err)
				assert.True(t, cov.Covered, "the array it was written for: %+v", cov)

				members := make([]string, 0, idx+1)
				for i := range idx + 1 {
					members = append(members, fmt.Sprintf(`"%d":"A"`, i))
				}
				_, asObject := nest("o", depth, `{"items":{`+strings.Join(members, ",")+`}}`)
				cov, err = grant.Covers(g, refund(asObject))
				require.NoError(t, err)
				assert.False(t, cov.Covered, "an object with index-named members: %s", asObject)
				assert.Equal(t, grant.ReasonUnpinned, cov.Reason)
			})
		}
	}
	for _, name := range []string{"00", "01", "-1", "+1", "1e0", "a0", "-"} {
		t.Run("member "+name, func(t *testing.T) {
			g := templateOf(grant.Pin("/items/"+name, "A"))
			cov, err := grant.Covers(g, refund(`{"items":{"`+name+`":"A"}}`))
			require.NoError(t, err)
			assert.True(t, cov.Covered, "%+v", cov)
		})
	}
	// A rule on the enclosing value still covers the object as a whole.
	g := templateOf(grant.Pin("/items", map[string]string{"0": "A"}))
	cov, err := grant.Covers(g, refund(`{"items":{"0":"A"}}`))
	require.NoError(t, err)
	assert.True(t, cov.Covered)
}

// TestDomainRuleRefusesRelayingLocalParts: an address whose local part
// holds "%" or "!" (the percent hack, UUCP bang paths: mail relayed on
// through the named domain) is not covered by a rule for that domain,
// wherever the character sits; other dot-atom characters still are.
func TestDomainRuleRefusesRelayingLocalParts(t *testing.T) {
	g := templateOf(grant.InDomains("/to", "example.com"))
	for _, c := range []string{"%", "!"} {
		for _, local := range []string{"a" + c + "evil.com", "evil.com" + c + "a", c + "a", "a" + c, "a" + c + c + "b", "x.y" + c + "z"} {
			t.Run(local, func(t *testing.T) {
				cov, err := grant.Covers(g, refund(`{"to":"`+local+`@example.com"}`))
				require.NoError(t, err)
				assert.False(t, cov.Covered)
				assert.Equal(t, grant.ReasonBounds, cov.Reason)
			})
		}
	}
	for _, local := range []string{"a", "a.b", "a+tag", "o'neil", "a_b-c", "x#y", "{z}"} {
		t.Run("ok "+local, func(t *testing.T) {
			cov, err := grant.Covers(g, refund(`{"to":"`+local+`@example.com"}`))
			require.NoError(t, err)
			assert.True(t, cov.Covered, "%+v", cov)
		})
	}
}
