package attackkit

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVisiblyFoldsWhatLooksAlike(t *testing.T) {
	alike := [][2]string{
		{"finance@example.com", "finance@ex\u0430mple.com"},
		{"finance@example.com", "finance@exarnple.com"},
		{"finance@example.com", "finance@examp1e.com"},
		{"finance@example.com", "fin\u200bance@example.com"},
		{"ops@example.com", "\u03bfps@example.com"},
		{"Q3 summary", "Q3\u00a0summary"},
		{"Q3 summary", "Q3  summary"},
		{"Q3 summary", "Q3 summary  "},
		{"Q3 summary", "Q3 \u202esummary"},
		{"r\u00e9sum\u00e9", "re\u0301sume\u0301"},
		{"yes", "\uff59\uff45\uff53"},
		{"d", "c1"},
	}
	for _, p := range alike {
		assert.Equal(t, visibly(p[0]), visibly(p[1]), "%q and %q look alike", p[0], p[1])
	}
	distinct := [][2]string{
		{"finance@example.com", "Finance@example.com"},
		{"finance@example.com", "finance@example.org"},
		{`"Q3 summary"`, `"Q3 summary "`},
		{`"finance@ex\u{430}mple.com"`, `"finance@example.com"`},
		{"400", "400.5"},
		{"line one\nline two", "line one line two"},
	}
	for _, p := range distinct {
		assert.NotEqual(t, visibly(p[0]), visibly(p[1]), "%q and %q look different", p[0], p[1])
	}
}

// TestVisiblyIgnoresInvisibleCharacters inserts invisible characters at
// random places of random text: the text still looks the same.
func TestVisiblyIgnoresInvisibleCharacters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	invisible := []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u202c", "\u00ad"}
	const letters = "abcdefghijklmnopqrstuvwxyz@.-_ ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\""
	for range 500 {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		s := b.String()
		at := r.IntN(len(s) + 1)
		spiked := s[:at] + invisible[r.IntN(len(invisible))] + s[at:]
		assert.Equal(t, visibly(s), visibly(spiked), "%q", spiked)
		assert.Equal(t, visibly(s), visibly(visibly(s)), "idempotent on %q", s)
	}
}

func FuzzVisibly(f *testing.F) {
	for _, s := range []string{"finance@ex\u0430mple.com", "c1rn", "Q3\u00a0 summary\n", "re\u0301sume\u0301", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := visibly(s)
		if visibly(v) != v {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, v, visibly(v))
		}
		if visibly(s+"\u200b") != v {
			t.Fatalf("a trailing zero-width space changed how %q looks", s)
		}
	})
}

// TestVisiblyFoldsAfterInvalidBytes: an invalid byte reads as U+FFFD
// and takes nothing after it out of the folding: before characters NFKC
// folds (º, ﬁ, ①, ｆ, a decomposed é) and look-alikes, visibly gives the
// form of the same text with one U+FFFD for each invalid byte, and the
// same form again when applied to it.
func TestVisiblyFoldsAfterInvalidBytes(t *testing.T) {
	for _, bad := range []string{"\x80", "\xbf", "\xc0", "\xc2", "\xe4\xb8", "\xf0\x9f\x98", "\xf5", "\xff", "\xff\xfe"} {
		for _, after := range []string{"º", "\ufb01", "\u2460", "\uff46", "e\u0301", "\u0430", "1", " x", "\u200b"} {
			s := "a" + bad + after
			want := visibly("a" + strings.Repeat("\ufffd", len(bad)) + after)
			assert.Equal(t, want, visibly(s), "%q", s)
			assert.Equal(t, visibly(s), visibly(visibly(s)), "idempotent on %q", s)
		}
	}
}
