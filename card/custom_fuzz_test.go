package card_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// FuzzCustom: whatever a custom renderer writes in a line, the card is
// built or refused without panicking, and a built card's JSON hashes to
// the hash the challenge would commit to, with the renderer named in it.
func FuzzCustom(f *testing.F) {
	f.Add("acme/v1", "Amount", "12.50 EUR to Dana")
	f.Add("acme/v1", "", "")
	f.Add("x", "\u202eevil", "a\u200bb\x00\"\\\n")
	f.Add(card.RendererID, "label", "value")
	s := customSealed(f)
	f.Fuzz(func(t *testing.T, id, label, value string) {
		c, err := card.Custom(id, s, customCtx, []card.Line{{Label: label, Value: value}, {Label: value, Value: label}})
		if err != nil {
			return
		}
		j, err := c.JSON()
		require.NoError(t, err)
		h, err := card.HashJSON(j)
		require.NoError(t, err)
		require.Equal(t, c.Hash(), h)
		_ = c.Text()
		_ = c.HTML()
	})
}
