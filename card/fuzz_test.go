package card_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// FuzzRender checks the card's defining property on generated pairs of
// effects: equal visible text implies equal digests. Each input pair is
// tried twice: as two argument objects, and as two string values of the
// same argument (where most look-alike tricks live). It also checks that
// the card hash is a function of the card JSON alone.
//
//	go test ./card -run '^$' -fuzz FuzzRender -fuzztime 20s
func FuzzRender(f *testing.F) {
	for _, tc := range onePlaceChanges() {
		f.Add([]byte(tc.a.Args), []byte(tc.b.Args))
	}
	f.Add([]byte("é"), []byte("e\u0301"))
	f.Add([]byte("a\u200bb"), []byte(`a\u{200B}b`))
	f.Add([]byte("x@exarnple.com"), []byte("x@example.com"))
	ctx := injectivityContext()
	f.Fuzz(func(t *testing.T, a, b []byte) {
		sa, _ := json.Marshal(map[string]string{"subject": string(a), "to": string(b)})
		sb, _ := json.Marshal(map[string]string{"subject": string(b), "to": string(a)})
		sc, _ := json.Marshal(map[string]string{"subject": string(b), "to": string(b)})
		pairs := [][2][]byte{{a, b}, {sa, sb}, {sa, sc}}
		for _, p := range pairs {
			ea, eb := effectWith(string(p[0])), effectWith(string(p[1]))
			ca, errA := card.Render(ea, ctx)
			cb, errB := card.Render(eb, ctx)
			if errA != nil || errB != nil {
				continue
			}
			checkHash(t, ca)
			if ca.Visible() != cb.Visible() || htmlVisible(ca) != htmlVisible(cb) {
				continue
			}
			da, err := ea.Digest()
			require.NoError(t, err)
			db, err := eb.Digest()
			require.NoError(t, err)
			assert.Equal(t, da, db, "different effects, same visible card:\n%s", ca.Visible())
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
