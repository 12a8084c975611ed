package gateway

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// spellGen writes propose bodies in the spellings a runtime's JSON writer,
// or a hostile one, may use: member names escaped in part, in any case,
// repeated; values of every JSON type, null included; whitespace anywhere.
type spellGen struct{ rng *rand.Rand }

func (g spellGen) ws() string {
	return []string{"", " ", "\n", "\t ", "\r\n"}[g.rng.IntN(5)]
}

// name spells member name n: plainly, escaped in part, in another case,
// or as a near miss.
func (g spellGen) name(n string) string {
	switch g.rng.IntN(8) {
	case 0:
		var b strings.Builder
		for _, r := range n {
			if g.rng.IntN(2) == 0 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		return `"` + b.String() + `"`
	case 1:
		return `"` + strings.ToUpper(n[:1]) + n[1:] + `"`
	case 2:
		return `"` + n + "\u017f" + `"`
	case 3:
		return `"` + n + `\u0000"`
	}
	return `"` + n + `"`
}

func (g spellGen) str() string {
	return []string{`"x"`, `"user:dana"`, `"agent:a"`, `""`, `"\u0041"`, `"\ud83d\ude00"`, `"a\u2028b"`}[g.rng.IntN(7)]
}

func (g spellGen) value(depth int) string {
	switch g.rng.IntN(9) {
	case 0:
		return "null"
	case 1:
		return []string{"1", "-0", "1.0", "1e2", "0.30000000000000001", "1e400", "123456789012345678901"}[g.rng.IntN(7)]
	case 2:
		return []string{"true", "false"}[g.rng.IntN(2)]
	case 3, 4:
		if depth < 3 {
			n := g.rng.IntN(3)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = g.value(depth + 1)
			}
			return "[" + g.ws() + strings.Join(parts, ","+g.ws()) + "]"
		}
	case 5, 6:
		if depth < 3 {
			n := g.rng.IntN(3)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = g.name([]string{"a", "b", "user"}[g.rng.IntN(3)]) + ":" + g.value(depth+1)
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	return g.str()
}

func (g spellGen) member(allowed []string, depth int) string {
	n := allowed[g.rng.IntN(len(allowed))]
	var v string
	switch {
	case n == "principal" && g.rng.IntN(3) > 0:
		k := g.rng.IntN(4)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = g.member(principalKeys, depth+1)
		}
		v = "{" + strings.Join(parts, ",") + "}"
	case (n == "taint" || n == "delegations") && g.rng.IntN(2) == 0:
		k := g.rng.IntN(3)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = g.str()
			if g.rng.IntN(5) == 0 {
				parts[i] = g.value(depth)
			}
		}
		v = "[" + strings.Join(parts, ",") + "]"
	default:
		v = g.value(depth)
		if g.rng.IntN(2) == 0 {
			v = g.str()
		}
	}
	return g.ws() + g.name(n) + g.ws() + ":" + g.ws() + v + g.ws()
}

func (g spellGen) body() string {
	n := 1 + g.rng.IntN(6)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.member(callKeys, 0)
	}
	return g.ws() + "{" + strings.Join(parts, ",") + "}" + g.ws()
}

// TestDecodeCallReadsEverySpellingAsTheTokenWalk: the one-pass reading of
// a propose body accepts exactly the bodies the token-by-token reading
// accepts, and reads each the same way (arguments up to canonical form),
// over generated spellings: escaped and near-miss member names, repeats,
// every value type in every member, whitespace everywhere.
func TestDecodeCallReadsEverySpellingAsTheTokenWalk(t *testing.T) {
	g := spellGen{rng: rand.New(rand.NewPCG(3, 3))}
	accepted := 0
	for range 20000 {
		body := []byte(g.body())
		w, err := decodeCall(body)
		slow, serr := decodeCallTokens(body)
		if c, cerr := canon.Canonicalize(slow.Args); cerr == nil && serr == nil {
			slow.Args = c
		}
		require.Equal(t, serr == nil, err == nil, "%s: one pass %v, token walk %v", body, err, serr)
		if err == nil {
			accepted++
			require.True(t, reflect.DeepEqual(w, slow), "%s:\n one pass %+v\n token walk %+v", body, w, slow)
		}
	}
	require.Greater(t, accepted, 1000, "the generator makes bodies both accept")
}
