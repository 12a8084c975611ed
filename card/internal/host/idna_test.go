package host

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/idna"
)

// TestStableTableMatchesCompute: the generated table says what
// ComputeStable says for every code point, so it is current with the IDNA
// tables of golang.org/x/net. After an update, run go generate.
func TestStableTableMatchesCompute(t *testing.T) {
	require.Equal(t, idna.UnicodeVersion, idnaUnicodeVersion, "run go generate ./card/internal/host")
	step := rune(1)
	if testing.Short() || raceEnabled {
		step = 61 // a sample, spread over every plane
	}
	for r := rune(0); r <= utf8.MaxRune; r += step {
		if stableRune(r) != ComputeStable(r) {
			t.Fatalf("%U: table %v: run go generate ./card/internal/host", r, stableRune(r))
		}
	}
}

// checkFastIDNA: whenever the fast path converts a name, strict IDNA
// converts it to the same A-labels and back to the same Unicode form.
func checkFastIDNA(t *testing.T, h string) bool {
	ascii, uni, ok := fastIDNA(h)
	if !ok {
		return false
	}
	want, err := strictIDNA.ToASCII(h)
	require.NoError(t, err, "%q", h)
	require.Equal(t, want, ascii, "%q", h)
	back, err := strictIDNA.ToUnicode(ascii)
	require.NoError(t, err, "%q", h)
	require.Equal(t, back, uni, "%q", h)
	return true
}

func TestFastIDNAAgreesWithIDNA(t *testing.T) {
	var stable []rune
	for _, rg := range stableRanges {
		stable = append(stable, rg[0], rg[1], (rg[0]+rg[1])/2)
	}
	parts := []string{"a", "Z", "0", "-", ".", "xn--", "ab--c", strings.Repeat("x", 60), "_", "\u00e9", "\u00c9", "\u0301", "\u200b", "\u05d0", "\u3002", ""}
	rng := rand.New(rand.NewPCG(7, 9))
	converted := 0
	for range 50000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			if rng.IntN(2) == 0 {
				b.WriteRune(stable[rng.IntN(len(stable))])
			} else {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
		}
		if checkFastIDNA(t, b.String()) {
			converted++
		}
	}
	require.Greater(t, converted, 5000)
	for _, h := range []string{"b\u00fccher.de", "B\u00dcCHER.de", "\u4f8b\u3048.jp", "m\u00fcnchen-\u00e4.de", "\u00e9.\u00e9.\u00e9"} {
		checkFastIDNA(t, h)
	}
}

// FuzzFastIDNA: the fast path never disagrees with strict IDNA.
//
//	go test ./card/internal/host -run '^$' -fuzz FuzzFastIDNA -fuzztime 20s
func FuzzFastIDNA(f *testing.F) {
	for _, s := range []string{"b\u00fccher.de", "\u4f8b\u3048.jp", "xn--bcher-kva.de", "\u00e9-.de", "a\u00df.de"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if utf8.ValidString(h) {
			checkFastIDNA(t, h)
		}
	})
}
