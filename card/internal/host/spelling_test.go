package host

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/publicsuffix"
)

// spelling is one generated way to write a host in a value.
type spelling struct {
	value  string // the whole value
	name   string // the host as written, dots at its end included
	dots   int    // dots at its end
	relay  bool   // the local part routes the mail on
	asHost bool   // the value is a declared host name
}

// spellHost writes a host the ways a value can: an address (with or
// without a relay in its local part), a URL, a mailto: URI or a declared
// host name, its name in random case, with none, one or two dots at its
// end.
func spellHost(rng *rand.Rand, base string) spelling {
	var b strings.Builder
	for _, r := range base {
		if rng.IntN(3) == 0 {
			r = []rune(strings.ToUpper(string(r)))[0]
		}
		b.WriteRune(r)
	}
	sp := spelling{dots: []int{0, 0, 1, 1, 2, 3}[rng.IntN(6)]}
	sp.name = b.String() + strings.Repeat(".", sp.dots)
	local := "finance"
	switch rng.IntN(6) {
	case 0:
		local, sp.relay = "spy%relay.evil.net", true
	case 1:
		local, sp.relay = "evil.net!spy", true
	case 2:
		local, sp.relay = `"spy@evil.net"`, true
	}
	switch rng.IntN(5) {
	case 0:
		sp.value = local + "@" + sp.name
	case 1:
		sp.value = "https://" + sp.name + "/pay?x=1"
		sp.relay = false
	case 2:
		sp.value = "mailto:" + local + "@" + sp.name + "?subject=hi"
	case 3:
		sp.value = "Dana <" + local + "@" + sp.name + ">"
	default:
		sp.value, sp.asHost, sp.relay = sp.name, true, false
	}
	return sp
}

// TestHostSpellingsAgainstTheOracle: for generated spellings of hosts
// (trailing dots, case, relay local parts; addresses, URLs, mailto: URIs,
// declared hosts), the one host's registrable domain is the public suffix
// list's for the name with one root dot removed, the written form is kept,
// more than one dot at the end is warned as an empty label, and the badge
// goes exactly to a trusted registrable domain written with at most one
// root dot and no relay.
func TestHostSpellingsAgainstTheOracle(t *testing.T) {
	trustedList := []string{"example.com", "example.co.uk", "corp.example.org"}
	trusted, err := PrepareTrusted(trustedList)
	require.NoError(t, err)
	bases := []string{
		"example.com", "mail.example.com", "example.com.evil.net", "evil.net", "example.co.uk", "a.b.example.co.uk",
		"corp.example.org", "x.corp.example.org", "example.org", "exampie.com", "examples.com", "shop.example.com.co",
	}
	rng := rand.New(rand.NewPCG(22, 1))
	badged := 0
	for range 3000 {
		sp := spellHost(rng, bases[rng.IntN(len(bases))])
		doms, _, err := NewAnalyzer(trusted).Hosts(sp.value, sp.asHost)
		require.NoError(t, err, "%q", sp.value)
		require.NotEmpty(t, doms, "%q", sp.value)
		d := doms[0]
		lookedUp := strings.ToLower(strings.TrimRight(sp.name, "."))
		want, err := publicsuffix.EffectiveTLDPlusOne(lookedUp)
		require.NoError(t, err)
		assert.Equal(t, sp.name, d.Written.Text, "%q: the written form is shown", sp.value)
		assert.Equal(t, want, d.Registrable, "%q", sp.value)
		assert.Equal(t, lookedUp+strings.Repeat(".", sp.dots), d.ASCII, "%q", sp.value)
		assert.Equal(t, sp.dots > 1, has(d.Warnings, WarnEmptyLabel), "%q: %v", sp.value, d.Warnings)
		assert.Equal(t, sp.relay, has(d.Warnings, WarnRelay), "%q: %v", sp.value, d.Warnings)
		isTrusted := false
		for _, tr := range trusted {
			isTrusted = isTrusted || lookedUp == tr.ascii || strings.HasSuffix(lookedUp, "."+tr.ascii)
		}
		wantBadge := isTrusted && sp.dots <= 1 && !sp.relay
		assert.Equal(t, wantBadge, d.Trusted, "%q: %+v", sp.value, d)
		if d.Trusted {
			badged++
		}
		if sp.relay && !strings.HasSuffix(lookedUp, "evil.net") {
			var others []string
			for _, o := range doms[1:] {
				others = append(others, o.ASCII)
			}
			assert.NotEmpty(t, others, "%q: the relay host is listed", sp.value)
		}
	}
	assert.Greater(t, badged, 100, "some spellings are trusted")
}

// TestRelayNaiveVariantBadges shows the relay check has teeth: without
// it, an address that example.com's mail server relays to evil.net gets
// the badge.
func TestRelayNaiveVariantBadges(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	for _, v := range []string{"spy%evil.net@example.com", "evil.net!spy@example.com", `"spy@evil.net"@example.com`, `"spy%evil.net"@example.com`} {
		tg, one := parseWhole(v, false)
		require.True(t, one, v)
		naive := tg
		naive.relays = false
		d, err := analyzeHost(naive.host, naive.clean && !naive.relays && !naive.decoy, trusted, &scratch{})
		require.NoError(t, err)
		if !tg.decoy {
			assert.True(t, d.Trusted, "%q: the naive variant badges it", v)
		}
		doms, _, err := NewAnalyzer(trusted).Hosts(v, false)
		require.NoError(t, err)
		assert.False(t, doms[0].Trusted, v)
		assert.Contains(t, doms[0].Warnings, WarnRelay, v)
	}
}

// TestEmptyLabels: a name of dots only, or with dots to spare at its
// end, is warned and never trusted; a single root dot changes nothing.
func TestEmptyLabels(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	for _, tc := range []struct {
		host        string
		registrable string
		trusted     bool
		empty       bool
	}{
		{"example.com.", "example.com", true, false},
		{"example.com..", "example.com", false, true},
		{"EXAMPLE.COM.", "example.com", true, false},
		{"example.com.evil.net.", "evil.net", false, false},
		{"example.com。", "example.com", true, false},
	} {
		d, err := analyzeHost(tc.host, true, trusted, &scratch{})
		require.NoError(t, err, tc.host)
		assert.Equal(t, tc.registrable, d.Registrable, tc.host)
		assert.Equal(t, tc.trusted, d.Trusted, tc.host)
		assert.Equal(t, tc.empty, has(d.Warnings, WarnEmptyLabel), tc.host)
		assert.Equal(t, display.Show(tc.host).Text, d.Written.Text)
	}
}

func has(list []string, w string) bool {
	for _, g := range list {
		if g == w {
			return true
		}
	}
	return false
}
