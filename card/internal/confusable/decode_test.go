package confusable

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbeddedTableDecodes: the embedded data is a well-formed table of
// Version, every entry of it read.
func TestEmbeddedTableDecodes(t *testing.T) {
	header, _, _ := strings.Cut(data, "\n")
	assert.Contains(t, header, "Unicode "+Version, "the file states its Unicode version")
	es, err := decode(data)
	require.NoError(t, err)
	assert.Len(t, es, Len())
	assert.Greater(t, Len(), 6000, "the complete data, not a sample")
}

// encode encodes entries in gen's layout under header.
func encode(header string, es ...entry) string {
	b := []byte(header + "\n")
	prev := rune(-1)
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.r-prev))
		b = binary.AppendUvarint(b, uint64(len(e.skel)))
		b = append(b, e.skel...)
		prev = e.r
	}
	return string(b)
}

func TestDecodeRefuses(t *testing.T) {
	ok := "UTS #39 confusables, Unicode " + Version + ", 2 entries"
	good := encode(ok, entry{'1', "l"}, entry{0x430, "a"})
	es, err := decode(good)
	require.NoError(t, err)
	assert.Equal(t, []entry{{'1', "l"}, {0x430, "a"}}, es)

	for _, c := range []struct{ name, src string }{
		{"empty", ""},
		{"no header line", "UTS #39 confusables"},
		{"other version", encode("UTS #39 confusables, Unicode 0.0.1, 2 entries", entry{'1', "l"}, entry{0x430, "a"})},
		{"no count", encode("UTS #39 confusables, Unicode "+Version+", entries", entry{'1', "l"})},
		{"negative count", encode("UTS #39 confusables, Unicode " + Version + ", -1 entries")},
		{"count beyond the data", encode("UTS #39 confusables, Unicode "+Version+", 1000 entries", entry{'1', "l"})},
		{"fewer than the count", encode(ok, entry{'1', "l"})},
		{"more than the count", encode(ok, entry{'1', "l"}, entry{'2', "Z"}, entry{0x430, "a"})},
		{"repeated code point", encode(ok, entry{'1', "l"}, entry{'1', "I"})},
		{"beyond U+10FFFF", encode(ok, entry{'1', "l"}, entry{utf8.MaxRune + 1, "x"})},
		{"empty skeleton", encode(ok, entry{'1', "l"}, entry{0x430, ""})},
		{"skeleton not UTF-8", encode(ok, entry{'1', "l"}, entry{0x430, "\xff"})},
		{"truncated skeleton", good[:len(good)-1]},
		{"truncated varint", ok + "\n\x80"},
		{"trailing bytes", good + "\x01"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := decode(c.src)
			assert.Error(t, err)
		})
	}
}

// FuzzDecode: decode never panics, and whatever it accepts is a table
// Lookup can search: code points ascending and valid, skeletons non-empty
// UTF-8.
func FuzzDecode(f *testing.F) {
	f.Add(encode("UTS #39 confusables, Unicode "+Version+", 2 entries", entry{'1', "l"}, entry{0x430, "a"}))
	f.Add(data[:200])
	f.Fuzz(func(t *testing.T, src string) {
		es, err := decode(src)
		if err != nil {
			return
		}
		for i, e := range es {
			require.True(t, utf8.ValidRune(e.r) || (e.r >= 0xd800 && e.r <= 0xdfff))
			require.NotEmpty(t, e.skel)
			require.True(t, utf8.ValidString(e.skel))
			if i > 0 {
				require.Less(t, es[i-1].r, e.r)
			}
		}
	})
}
