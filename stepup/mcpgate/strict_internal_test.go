package mcpgate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/cputime"
)

// manyMembers are messages whose one object grows to n members, every
// name distinct once folded, spelled the ways the scanners read names.
var manyMembers = map[string]func(n int) string{
	"plain":   func(n int) string { return members(n, func(i int) string { return fmt.Sprintf("k%07d", i) }) },
	"cased":   func(n int) string { return members(n, func(i int) string { return fmt.Sprintf("Key_%07d", i) }) },
	"folding": func(n int) string { return members(n, func(i int) string { return fmt.Sprintf("ſ\u212a%07d", i) }) },
	"escaped": func(n int) string { return members(n, func(i int) string { return fmt.Sprintf(`\u006b%07d`, i) }) },
	"nested": func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[{"b":` +
			members(n, func(i int) string { return fmt.Sprintf("k%07d", i) }) + `}]}}}`
	},
}

// members is an object of n members named name(i).
func members(n int, name func(i int) string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s":%d`, name(i), i)
	}
	b.WriteByte('}')
	return b.String()
}

// TestMemberCheckIsLinear: an object of eight times the members costs
// the duplicate-member check (the fast scanner's and the decoder's
// tokens alike) far less than the 64 times a check of each name against
// every earlier one would, and a message one name twice over is still
// refused. Costs below a millisecond count as one, so noise on tiny
// figures cannot fail the test.
func TestMemberCheckIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("measures CPU time")
	}
	checks := map[string]func([]byte) error{"scanner": checkMembers, "tokens": checkMembersByTokens}
	cost := func(check func([]byte) error, raw []byte) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := cputime.Process()
			require.NoError(t, check(raw))
			best = min(best, cputime.Process()-start)
		}
		return best
	}
	const floor = time.Millisecond
	for shape, mk := range manyMembers {
		small, large := []byte(mk(4000)), []byte(mk(32000))
		for name, check := range checks {
			a, b := cost(check, small), cost(check, large)
			ratio := float64(max(b, floor)) / float64(max(a, floor))
			assert.Less(t, ratio, 24.0, "%s, %s: %v then %v", shape, name, a, b)
			// The same object with its first name again at the end.
			twice := strings.Replace(string(large), `}`, `,`+string(large[1:strings.IndexByte(string(large), ',')])+`}`, 1)
			if shape == "nested" {
				continue // its first member is the envelope's
			}
			require.ErrorIs(t, check([]byte(twice)), ErrDuplicateMember, "%s, %s", shape, name)
		}
	}
}

// TestMemberSetFindsEveryNameAgain: a memberSet finds a name again before and after
// it outgrows its list, and in the map it moves to.
func TestMemberSetFindsEveryNameAgain(t *testing.T) {
	for _, n := range []int{1, shortObject - 1, shortObject, shortObject + 1, 4 * shortObject, 1000} {
		var m memberSet
		for i := range n {
			require.False(t, m.add([]byte(fmt.Sprint("k", i))), "n=%d, first %d", n, i)
		}
		for i := range n {
			require.True(t, m.add([]byte(fmt.Sprint("k", i))), "n=%d, again %d", n, i)
		}
		require.False(t, m.add([]byte("other")))
	}
}
