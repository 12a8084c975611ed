package desk

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkLookalikes: n distinct values, none the real one, the same for the
// same seed.
func checkLookalikes(t *testing.T, kind, value string, seed [32]byte) {
	t.Helper()
	got := lookalikes(kind, value, rand.New(rand.NewChaCha8(seed)), confirmChoices-1)
	require.Len(t, got, confirmChoices-1, "%s %q", kind, value)
	seen := map[string]bool{value: true}
	for _, g := range got {
		require.False(t, seen[g], "%s %q: %q twice or the real value, in %q", kind, value, g, got)
		seen[g] = true
	}
	again := lookalikes(kind, value, rand.New(rand.NewChaCha8(seed)), confirmChoices-1)
	require.Equal(t, got, again, "deterministic")
}

func TestLookalikesAreDistinctAndNeverTheValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-"
	for range 2000 {
		var seed [32]byte
		for i := range seed {
			seed[i] = byte(rng.IntN(256))
		}
		var b strings.Builder
		for range 1 + rng.IntN(20) {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		tlds := []string{"", "com", "co.uk", "io", "de", "xn--p1ai"}
		domain := b.String()
		if tld := tlds[rng.IntN(len(tlds))]; tld != "" {
			domain += "." + tld
		}
		checkLookalikes(t, keyDomain, domain, seed)
		amount := []string{"0.01", "7", "10", "99.5", "120", "1000000", "-3", "499.99", "11"}[rng.IntN(9)]
		if rng.IntN(2) == 0 {
			amount += ` "EUR"`
		}
		checkLookalikes(t, keyAmount, amount, seed)
	}
}

func TestLookalikesLookAlike(t *testing.T) {
	got := domainLookalikes("example.com")
	assert.Contains(t, got, "exarnple.com", "rn for m")
	assert.Contains(t, got, "examp1e.com", "1 for l")
	assert.Contains(t, got, "example.co", "another top-level domain")
	amounts := amountLookalikes(`120 "EUR"`)
	assert.Contains(t, amounts, `1200 "EUR"`)
	assert.Contains(t, amounts, `12 "EUR"`)
	assert.Contains(t, amounts, `210 "EUR"`)
}

func FuzzLookalikes(f *testing.F) {
	for _, s := range []string{"example.com", "a", "", "..", `120.50 "EUR"`, "-", "0", "mmmm.mm", "1.2.3"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, domain bool) {
		if len(value) > maxKeyLen {
			value = value[:maxKeyLen]
		}
		kind := keyAmount
		if domain {
			kind = keyDomain
		}
		checkLookalikes(t, kind, value, [32]byte{1})
	})
}
