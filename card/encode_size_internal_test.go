package card

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// genJSON writes a random JSON value of at most depth levels: strings
// that need escaping in JSON and on the card, addresses, URLs, look-alikes,
// long strings, repeated strings (which the render shares), numbers,
// literals, empty and full lists and objects.
func genJSON(r *rand.Rand, b *strings.Builder, depth int) {
	strs := []string{"", "x", `q"uote`, `back\slash`, "tab\there", "line\nbreak", "\u0001ctl", "\u200bzw",
		"a@example.com", "https://ex\u0430mple.com/p", "finance@example.com.", "caf\u00e9", "\u0440\u0430\u0443\u0440\u0430\u043b",
		strings.Repeat("long ", 90), strings.Repeat("\u200b", 400), "3\ubd84\uae30", "  two  spaces"}
	switch k := r.IntN(10); {
	case depth > 0 && k < 2:
		n := r.IntN(5)
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			genJSON(r, b, depth-1)
		}
		b.WriteByte(']')
	case depth > 0 && k < 4:
		n := r.IntN(5)
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(strs[r.IntN(len(strs))] + strconv.Itoa(i))
			b.Write(key)
			b.WriteByte(':')
			genJSON(r, b, depth-1)
		}
		b.WriteByte('}')
	case k < 7:
		s, _ := json.Marshal(strs[r.IntN(len(strs))])
		b.Write(s)
	case k < 8:
		b.WriteString(strconv.Itoa(r.IntN(1 << 20)))
	default:
		b.WriteString([]string{"true", "false", "null", "1.5", "-0.25"}[r.IntN(5)])
	}
}

// TestNodeSizesAreExact: the size the render counts for each node is the
// length of the card JSON the node is written as, for every node of
// generated effects, so the card JSON is written into room of its exact
// size (never regrown).
func TestNodeSizesAreExact(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for round := range 300 {
		var b strings.Builder
		b.WriteString(`{"a":`)
		genJSON(r, &b, 1+round%6)
		b.WriteString(`,"b":`)
		genJSON(r, &b, 3)
		b.WriteString(`}`)
		s, err := canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(b.String()), PolicyVersion: "1"})
		require.NoError(t, err, b.String())
		for _, remember := range []bool{true, false} {
			c, err := Renderer{}.render(s, Context{Class: ClassRead, Trusted: []string{"example.com"}}, remember)
			require.NoError(t, err)
			assert.Equal(t, len(c.canonical), cap(c.canonical), "%s", b.String())
			var check func(n *node)
			check = func(n *node) {
				w := &jsonWriter{limit: HashLimits().MaxBytes}
				w.nodeBody(n)
				require.Equal(t, w.len(), int(n.size), "%s: node %s", b.String(), w.b[:w.len()])
				for i := range n.items() {
					check(&n.items()[i])
				}
				for i := range n.members() {
					check(&n.members()[i].Value)
				}
			}
			for i := range c.m.Args {
				check(&c.m.Args[i].Value)
			}
		}
	}
}

// TestHTMLCountIsExact: the HTML view written by a builder that only
// counts has the length of the view written, for the cards of generated
// effects; and the view is the same whatever room it is written into.
func TestHTMLCountIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 2))
	for round := range 200 {
		var b strings.Builder
		b.WriteString(`{"a":`)
		genJSON(r, &b, 1+round%6)
		b.WriteString(`}`)
		s, err := canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(b.String()), PolicyVersion: "1"})
		require.NoError(t, err)
		c, err := RenderSealed(s, Context{Class: ClassRead, Trusted: []string{"example.com"}, Rationale: "why\n\u200b"})
		require.NoError(t, err)
		w := &hw{st: nodeState{seen: make([]span, c.m.memos), limit: viewBudget(c, htmlPerSource)}}
		w.b.CountOnly()
		require.True(t, c.writeHTML(w))
		assert.Equal(t, len(c.HTML()), w.b.Len(), "%s", b.String())
		for _, room := range []int{0, 1, w.b.Len() / 2, w.b.Len(), 4 * w.b.Len()} {
			w := &hw{st: nodeState{seen: make([]span, c.m.memos), limit: viewBudget(c, htmlPerSource)}}
			w.b.Grow(room)
			require.True(t, c.writeHTML(w))
			assert.Equal(t, string(c.HTML()), w.b.String(), "%s in room of %d", b.String(), room)
		}
	}
}
