package canon_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// utf16Less is RFC 8785's key order (section 3.2.3), written the obvious way.
func utf16Less(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// TestKeyOrderIsUTF16: supplementary characters (surrogate pairs, first unit
// 0xD800-0xDBFF) sort before U+E000-U+FFFF, although their UTF-8 bytes and
// code points sort after. Sorting by bytes, as a naive canonicalizer would,
// gets this wrong.
func TestKeyOrderIsUTF16(t *testing.T) {
	want := []string{
		"", "a", "a\U00010000", "a\uE000", "é", "ÿ", "\uD7FF",
		"\U00010000", "\U00010000a", "\U0001D11E", "\U0001F602", "\U0010FFFF",
		"\uE000", "\uFB33", "\uFEFF", "\uFFFD", "\uFFFF",
	}
	// The naive order differs, or this test would prove nothing.
	naive := slices.Clone(want)
	sort.Strings(naive)
	require.NotEqual(t, want, naive)

	var in, out strings.Builder
	in.WriteByte('{')
	out.WriteByte('{')
	for i, k := range slices.Backward(want) {
		if i != len(want)-1 {
			in.WriteByte(',')
		}
		in.WriteString(`"` + k + `":` + string(rune('0'+i%10)))
	}
	for i, k := range want {
		if i > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"` + k + `":` + string(rune('0'+i%10)))
	}
	in.WriteByte('}')
	out.WriteByte('}')

	got, err := canon.Canonicalize([]byte(in.String()))
	require.NoError(t, err)
	assert.Equal(t, out.String(), string(got))
	viaJCS, err := jcs.Transform([]byte(in.String()))
	require.NoError(t, err)
	assert.Equal(t, string(viaJCS), string(got))
}

// TestKeyOrderProperty checks generated objects with keys drawn from
// characters on both sides of the surrogate block: the output keys come out
// in UTF-16 order.
func TestKeyOrderProperty(t *testing.T) {
	for seed := range uint64(300) {
		g := newGen(5000 + seed)
		doc := g.object(1, 12)
		out, err := canon.Canonicalize(doc.noisy(g.r))
		require.NoError(t, err)
		keys := topLevelKeys(t, out)
		assert.True(t, slices.IsSortedFunc(keys, utf16Less), "seed %d: %q", seed, keys)
		assert.Len(t, keys, len(doc.members))
	}
}

func topLevelKeys(t *testing.T, obj []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}
