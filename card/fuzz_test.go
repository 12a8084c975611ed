package card_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// FuzzRender checks the card's defining property on generated pairs of
// effects: cards that look the same (after invisible characters are
// removed and look-alikes folded, in the text view at a fuzzed width and in
// the HTML view's text) belong to equal digests. Each input pair is tried
// as two argument objects, and as string values and keys of the same
// argument (where most look-alike tricks live). It also checks that the
// card hash is a function of the card JSON alone, and that no line of the
// text view is wider than asked, and that the card of the sealed effect,
// rendered without sharing work between repeated strings, is the same.
//
//	go test ./card -run '^$' -fuzz FuzzRender -fuzztime 20s
func FuzzRender(f *testing.F) {
	for _, tc := range onePlaceChanges() {
		f.Add([]byte(tc.a.Args), []byte(tc.b.Args), uint8(40))
	}
	f.Add([]byte("é"), []byte("e\u0301"), uint8(0))
	f.Add([]byte("a\u200bb"), []byte(`a\u{200B}b`), uint8(3))
	f.Add([]byte("x@exarnple.com"), []byte("x@example.com"), uint8(40))
	f.Add([]byte("a  b"), []byte(`a\{2 spaces}b`), uint8(1))
	f.Add([]byte("p\u0430ypal"), []byte("paypal"), uint8(0))
	f.Add([]byte("aaaa bbbb"), []byte("aaaabbbb"), uint8(7))
	ctx := injectivityContext()
	f.Fuzz(func(t *testing.T, a, b []byte, w uint8) {
		width := card.MinWidth + int(w)
		sa, _ := json.Marshal(map[string]string{"subject": string(a), "to": string(b)})
		sb, _ := json.Marshal(map[string]string{"subject": string(b), "to": string(a)})
		sc, _ := json.Marshal(map[string]string{"subject": string(b), "to": string(b)})
		ka, _ := json.Marshal(map[string]string{string(a): "x"})
		kb, _ := json.Marshal(map[string]string{string(b): "x"})
		pairs := [][2][]byte{{a, b}, {sa, sb}, {sa, sc}, {ka, kb}}
		for _, p := range pairs {
			ea, eb := effectWith(string(p[0])), effectWith(string(p[1]))
			ca, errA := card.Render(ea, ctx)
			cb, errB := card.Render(eb, ctx)
			if errA != nil || errB != nil {
				continue
			}
			checkHash(t, ca)
			sealed, err := canon.Seal(ea)
			require.NoError(t, err)
			cu, err := card.RenderUnshared(sealed, ctx)
			require.NoError(t, err)
			sameCard(t, ca, cu, false, "rendered without the memory of repeated strings")
			for _, l := range strings.Split(ca.TextWidth(width), "\n") {
				require.LessOrEqual(t, displayCols(l), width, "line wider than %d: %q", width, l)
			}
			if foldVisible(visibleAt(ca, width)) != foldVisible(visibleAt(cb, width)) ||
				foldVisible(htmlVisible(ca)) != foldVisible(htmlVisible(cb)) {
				continue
			}
			da, err := ea.Digest()
			require.NoError(t, err)
			db, err := eb.Digest()
			require.NoError(t, err)
			assert.Equal(t, da, db, "different effects, same visible card:\n%s", visibleAt(ca, width))
		}
	})
}

func checkHash(t *testing.T, c *card.Card) {
	t.Helper()
	js, err := c.JSON()
	require.NoError(t, err)
	h, err := card.HashJSON(js)
	require.NoError(t, err)
	require.Equal(t, c.Hash(), h)
}
