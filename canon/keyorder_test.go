package canon_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// TestKeysOrderByUTF16CodeUnits: RFC 8785 sorts member names by their
// UTF-16 code units, all of them. Keys that differ only in characters
// above U+FFFF sharing a high surrogate (😀 and 😁) are distinct and order
// by the low surrogate; generated keys mixing such characters with others
// canonicalize in the order a plain UTF-16 sort gives, and never as
// duplicates.
func TestKeysOrderByUTF16CodeUnits(t *testing.T) {
	got, err := canon.Canonicalize([]byte(`{"😁":1,"😀":2}`))
	require.NoError(t, err)
	require.Equal(t, `{"😀":2,"😁":1}`, string(got))

	rng := rand.New(rand.NewPCG(16, 16))
	alphabet := []rune{'a', 'z', 'é', 0xFFFF, 0xE000, 0x1F600, 0x1F601, 0x1F6FF, 0x10000, 0x103FF, 0x10400, 0x10FFFF, 0x1D11E}
	for range 2000 {
		keys := map[string]bool{}
		for range 2 + rng.IntN(6) {
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
			keys[b.String()] = true
		}
		names := make([]string, 0, len(keys))
		obj := map[string]int{}
		for k := range keys {
			names = append(names, k)
			obj[k] = len(names)
		}
		raw, err := json.Marshal(obj)
		require.NoError(t, err)
		out, err := canon.Canonicalize(raw)
		require.NoError(t, err, "%q", raw)
		slices.SortFunc(names, func(x, y string) int {
			return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
		})
		var parsed []string
		dec := json.NewDecoder(strings.NewReader(string(out)))
		_, _ = dec.Token()
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			parsed = append(parsed, k.(string))
			var v any
			require.NoError(t, dec.Decode(&v))
		}
		require.Equal(t, names, parsed, "%q", raw)
	}
}
