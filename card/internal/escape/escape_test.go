package escape

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscaperShow(t *testing.T) {
	cases := []struct {
		name, in, want string
		flags          []string
	}{
		{"plain", "Q3 summary", "Q3 summary", nil},
		{"empty", "", "", []string{FlagEmpty}},
		{"quote and backslash", `a"b\c`, `a\"b\\c`, nil},
		{"newline tab cr", "a\nb\tc\rd", `a\nb\tc\rd`, []string{FlagLines, FlagControl}},
		{"escape", "\x1b[31m", `\u{001B}[31m`, []string{FlagControl}},
		{"C1 control", "a\u0085b", `a\u{0085}b`, []string{FlagControl}},
		{"zero-width space", "a\u200bb", `a\u{200B}b`, []string{FlagInvisible}},
		{"zero-width joiner", "a\u200db", `a\u{200D}b`, []string{FlagInvisible}},
		{"soft hyphen", "ex\u00adample", `ex\u{00AD}ample`, []string{FlagInvisible}},
		{"BOM", "\ufeffx", `\u{FEFF}x`, []string{FlagInvisible}},
		{"Hangul filler", "a\u3164b", `a\u{3164}b`, []string{FlagInvisible}},
		{"variation selector", "a\ufe0f", `a\u{FE0F}`, []string{FlagInvisible}},
		{"tag character", "a\U000E0041", `a\u{E0041}`, []string{FlagInvisible}},
		{"right-to-left override", "abc\u202edcba", `abc\u{202E}dcba`, []string{FlagBidi}},
		{"isolate", "\u2066x\u2069", `\u{2066}x\u{2069}`, []string{FlagBidi}},
		{"right-to-left mark", "a\u200fb", `a\u{200F}b`, []string{FlagBidi}},
		{"no-break space", "a\u00a0b", `a\u{00A0}b`, []string{FlagSpace}},
		{"line separator", "a\u2028b", `a\u{2028}b`, []string{FlagInvisible}},
		{"private use", "a\ue000", `a\u{E000}`, []string{FlagPrivate}},
		{"unassigned", "a\U0003FFFD", `a\u{3FFFD}`, []string{FlagPrivate}},
		{"NFC precomposed", "Caf\u00e9", "Caf\u00e9", nil},
		{"NFD decomposed", "Cafe\u0301", `Cafe\u{0301}`, []string{FlagNotNFC}},
		{"generic mark on a base", "q\u0301", `q\u{0301}`, []string{FlagCombining}},
		{"dot above with no precomposed form", "q\u0307", `q\u{0307}`, []string{FlagCombining}},
		{"script mark on its own script", "\u0928\u092e\u0938\u094d\u0924\u0947", "\u0928\u092e\u0938\u094d\u0924\u0947", nil},
		{"script mark on another script", "a\u094d", `a\u{094D}`, []string{FlagCombining, FlagMixedScript}},
		{"braille blank", "x\u2800y", `x\u{2800}y`, []string{FlagInvisible}},
		{"space runs", "a  b    c", `a\{2 spaces}b\{4 spaces}c`, []string{FlagSpaceRun}},
		{"box drawing", "\u258c x \u2506", `\u{258C} x \u{2506}`, []string{FlagDrawing}},
		{"canonical singleton", "\u212a", `\u{212A}`, []string{FlagNotNFC}},
		{"trailing space", "abc ", "abc ", []string{FlagTrailingSpace}},
		{"leading space", " abc", " abc", []string{FlagLeadingSpace}},
		{"mixed script word", "p\u0430ypal", `p\u{0430}ypal`, []string{FlagLookalike, FlagMixedScript}},
		{"Cyrillic imitating Latin", "see \u0441\u043e\u0440", `see \u{0441}\u{043E}\u{0440}`, []string{FlagLookalike}},
		{"Cherokee in a Latin word", "Q3 summ\u0251ry \u13aaCME", `Q3 summ\u{0251}ry \u{13AA}CME`, []string{FlagLookalike, FlagMixedScript}},
		{"Latin look-alikes", "\u0131 \uab32", `\u{0131} \u{AB32}`, []string{FlagLookalike}},
		{"typographic apostrophe and dash", "Dana\u2019s \u2013 draft", `Dana\u{2019}s \u{2013} draft`, []string{FlagLookalike}},
		{"Cyrillic letter without a look-alike", "\u0436\u0434", "\u0436\u0434", nil},
		{"accented Latin", "caf\u00e9 na\u00efve", "caf\u00e9 na\u00efve", nil},
		{"Japanese mixed", "Go\u8a00\u8a9e\u306e\u672c", "Go\u8a00\u8a9e\u306e\u672c", nil},
		{"full-width", "\uff45xample", `\u{FF45}xample`, []string{FlagCompat}},
		{"full-width not in the confusables data", "\uff54o", `\u{FF54}o`, []string{FlagCompat}},
		{"ligature", "\ufb01le", `\u{FB01}le`, []string{FlagCompat}},
		{"Hebrew", "\u05e9\u05dc\u05dd 123", "\u05e9\u05dc\u05dd 123", []string{FlagRTL}},
		{"escape look-alike", `\u{200B}`, `\\u{200B}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Escaper{Quote: true}.Show(tc.in)
			assert.Equal(t, tc.want, got.Text)
			assert.Equal(t, tc.flags, got.Flags)
		})
	}
}

// unescape inverts the escaper: it is the proof that display text
// determines the string.
func unescape(t *testing.T, s string, keepNewlines bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			r, n := utf8.DecodeRuneInString(s[i:])
			require.False(t, r == '\n' && !keepNewlines, "raw newline in single-line display")
			b.WriteRune(r)
			i += n
			continue
		}
		require.Less(t, i+1, len(s), "dangling backslash")
		switch s[i+1] {
		case '\\', '"':
			b.WriteByte(s[i+1])
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '{':
			end := strings.IndexByte(s[i:], '}')
			require.Greater(t, end, 2)
			n, err := strconv.Atoi(strings.TrimSuffix(s[i+2:i+end], " spaces"))
			require.NoError(t, err)
			require.GreaterOrEqual(t, n, 2)
			b.WriteString(strings.Repeat(" ", n))
			i += end + 1
			continue
		case 'u':
			end := strings.IndexByte(s[i:], '}')
			require.Greater(t, end, 3)
			n, err := strconv.ParseUint(s[i+3:i+end], 16, 32)
			require.NoError(t, err)
			b.WriteRune(rune(n))
			i += end + 1
			continue
		default:
			t.Fatalf("unknown escape %q", s[i:i+2])
		}
		i += 2
	}
	return b.String()
}

// TestEscaperInjective: for random strings over an alphabet of troublesome
// characters, the display decodes back to the string.
func TestEscaperInjective(t *testing.T) {
	alphabet := []rune("aeo   pmrnl1I0\\\"{}u\n\r\t\x1b\u0085\u00a0\u00ad\u0301\u0323\u00e9\u0430\u0435\u043e\u03bf" +
		"\u200b\u200c\u200d\u200e\u202e\u2066\u2028\u3000\ufe0f\ufeff\ue000\uff45\u05d0\u0627\U0001F600\U000E0041")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		n := rng.IntN(12)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		for _, e := range []Escaper{{Quote: true}, {KeepNewlines: true}, {Quote: true, Prose: true}, {KeepNewlines: true, Prose: true}} {
			got := e.Show(s).Text
			require.Equal(t, s, unescape(t, got, e.KeepNewlines), "display %q", got)
			if e.Quote {
				bare := strings.ReplaceAll(strings.ReplaceAll(got, `\\`, ""), `\"`, "")
				require.NotContains(t, bare, `"`, "unescaped quote in %q", got)
			}
		}
	}
}

func TestCutEscapedKeepsEscapesWhole(t *testing.T) {
	s := Escaper{Quote: true}.Show(strings.Repeat("ab\u200b", 100)).Text
	for n := 1; n < 60; n++ {
		cut := Cut(s, n)
		assert.True(t, strings.HasPrefix(s, cut))
		assert.False(t, strings.HasSuffix(cut, `\`) || strings.Count(cut, "{") != strings.Count(cut, "}"), "cut %q", cut)
	}
}

// FuzzEscaper: whatever the string, the display decodes back to it, holds
// no bare control, invisible, drawing or look-alike character, and every
// character shown as itself is its own fold.
//
//	go test ./card/internal/escape -run '^$' -fuzz FuzzEscaper -fuzztime 20s
func FuzzEscaper(f *testing.F) {
	for _, s := range []string{"", "a  b", "p\u0430ypal", "e\u0301", "\u1112\u1161", "x\u2800y", "\u258c==", `\{2 spaces}`, "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, e := range []Escaper{{Quote: true}, {KeepNewlines: true}, {Quote: true, Prose: true}} {
			got := e.Show(s).Text
			require.Equal(t, s, unescape(t, got, e.KeepNewlines), "display %q", got)
			if e.Prose {
				continue // prose shows look-alikes of its own choosing: see TestProseTwins
			}
			for _, r := range got {
				if r < 0x80 {
					require.True(t, r >= 0x20 && r != 0x7f || r == '\n' && e.KeepNewlines, "bare control %U in %q", r, got)
					continue
				}
				require.Empty(t, hiddenKind(r, true, scriptName(r)), "%U shown bare in %q", r, got)
			}
		}
	})
}

// TestFlagBitIsFlagOrder: the switch that sets a flag's bit agrees with
// the display order, for every flag, and ignores other names.
func TestFlagBitIsFlagOrder(t *testing.T) {
	for i, f := range flagOrder {
		assert.Equal(t, uint32(1)<<i, flagBit(f), f)
	}
	assert.Zero(t, flagBit("no-such-flag"))
}
