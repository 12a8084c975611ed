package card_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/publicsuffix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// cardDomain is the part of a domain of the card JSON these tests read.
type cardDomain struct {
	ASCII       string   `json:"ascii"`
	Registrable string   `json:"registrable"`
	Trusted     bool     `json:"trusted"`
	LooksLike   string   `json:"looks_like"`
	Warnings    []string `json:"warnings"`
	Written     struct {
		Text string `json:"text"`
	} `json:"written"`
}

// argDomains returns the domains of the card's argument "to" and of its
// references' names.
func argDomains(t *testing.T, c *card.Card) (arg []cardDomain, refs [][]cardDomain) {
	t.Helper()
	js, err := c.JSON()
	require.NoError(t, err)
	var m struct {
		Args []struct {
			Name  struct{ Text string } `json:"name"`
			Value struct {
				Domains []cardDomain `json:"domains"`
			} `json:"value"`
		} `json:"args"`
		Refs []struct {
			NameDomains []cardDomain `json:"name_domains"`
		} `json:"refs"`
		Unbound []struct {
			NameDomains []cardDomain `json:"name_domains"`
		} `json:"unbound"`
	}
	require.NoError(t, json.Unmarshal(js, &m))
	for _, a := range m.Args {
		if a.Name.Text == "to" {
			arg = a.Value.Domains
		}
	}
	for _, r := range m.Refs {
		refs = append(refs, r.NameDomains)
	}
	for _, r := range m.Unbound {
		refs = append(refs, r.NameDomains)
	}
	return arg, refs
}

// TestHostFindingsOfIssue22: the spellings that were read wrong. A root
// dot is the same domain; two are an empty label; a relay local part is
// never badged; near-misses, small capitals and Han and kana strokes
// among Latin letters are warned.
func TestHostFindingsOfIssue22(t *testing.T) {
	ctx := injectivityContext()
	ctx.Trusted = []string{"example.com", "paypal.com"}
	cases := []struct {
		to          string
		registrable string
		trusted     bool
		warning     string
	}{
		{"https://example.com.evil.net./", "evil.net", false, "contains-trusted"},
		{"https://example.com../", "example.com", false, "empty-label"},
		{"finance@example.com.", "example.com", true, ""},
		{"https://example.com./pay", "example.com", true, ""},
		{"finance@exampie.com", "exampie.com", false, "near-miss"},
		{"https://exampl\u0117.com/", "xn--exampl-n4a.com", false, "near-miss"},
		{"https://\u1d07xample.com/", "xn--xample-vz5b.com", false, "lookalike-label"},
		{"https://paypa\u4e28.com/", "xn--paypa-fn1h.com", false, "lookalike-label"},
		{"https://examp\u30fcle.com/", "xn--example-gc5f.com", false, "lookalike-label"},
		{"spy%evil.net@example.com", "example.com", false, "relay-local-part"},
		{"evil.net!spy@example.com", "example.com", false, "relay-local-part"},
	}
	for _, tc := range cases {
		t.Run(tc.to, func(t *testing.T) {
			args, err := json.Marshal(map[string]string{"to": tc.to})
			require.NoError(t, err)
			c := mustRender(t, effectWith(string(args)), ctx)
			doms, _ := argDomains(t, c)
			require.NotEmpty(t, doms)
			d := doms[0]
			assert.Equal(t, tc.registrable, d.Registrable)
			assert.Equal(t, tc.trusted, d.Trusted)
			if tc.warning != "" {
				assert.Contains(t, d.Warnings, tc.warning)
			}
			text, html, js := badged(t, c)
			assert.Equal(t, tc.trusted, text || html || js)
			assert.Equal(t, tc.trusted, text && html && js)
		})
	}
}

// TestReferenceNamesAnalysed: the name of a reference, bound or not, gets
// the analysis of an argument: its hosts listed, look-alikes warned, in
// every view.
func TestReferenceNamesAnalysed(t *testing.T) {
	ctx := injectivityContext()
	e := effectWith(`{"subject":"x"}`)
	e.Refs = []canon.Ref{
		{Name: "https://exarnple.com/q3.csv", Kind: "url", Size: 3, SHA256: canon.Digest{1}},
		{Name: "https://exampie.com/offer", Kind: "url", Unbound: "not fetched"},
		{Name: "q3.csv", Kind: "file", Size: 3, SHA256: canon.Digest{2}},
	}
	c := mustRender(t, e, ctx)
	_, refs := argDomains(t, c)
	require.Len(t, refs, 3)
	require.NotEmpty(t, refs[0])
	assert.Equal(t, "example.com", refs[0][0].LooksLike)
	assert.Contains(t, refs[0][0].Warnings, "lookalike")
	assert.Empty(t, refs[1], "a file name names no host")
	require.NotEmpty(t, refs[2], "the unbound reference")
	assert.Contains(t, refs[2][0].Warnings, "near-miss")
	assert.Contains(t, c.Text(), "domain exarnple.com")
	assert.Contains(t, c.Text(), "domain exampie.com")
	assert.Contains(t, string(c.HTML()), "exarnple.com")
	assert.Equal(t, 2, strings.Count(c.Text(), "LOOKS LIKE"), c.Text())
}

// TestGeneratedSpellingsAgainstTheOracle: generated spellings of hosts
// (random case; none, one or two dots at the end; relay local parts; as
// an address, a URL or a mailto: URI; as an argument value and as a
// reference's name) carry, on the card, the registrable domain the public
// suffix list gives for the name with one root dot removed; the badge
// goes exactly to a trusted domain written with at most one root dot and
// no relay, a reference's name as an argument's.
func TestGeneratedSpellingsAgainstTheOracle(t *testing.T) {
	ctx := injectivityContext()
	ctx.Trusted = []string{"example.com", "example.co.uk"}
	bases := []string{"example.com", "mail.example.com", "example.com.evil.net", "evil.net", "a.example.co.uk", "example.org", "exampie.com"}
	rng := rand.New(rand.NewPCG(22, 2))
	badged := 0
	for range 600 {
		base := bases[rng.IntN(len(bases))]
		var name strings.Builder
		for _, r := range base {
			if rng.IntN(3) == 0 {
				r = unicode.ToUpper(r)
			}
			name.WriteRune(r)
		}
		dots := []int{0, 0, 1, 1, 2}[rng.IntN(5)]
		written := name.String() + strings.Repeat(".", dots)
		relay := false
		local := "finance"
		if rng.IntN(4) == 0 {
			local, relay = "spy%relay.evil.net", true
		}
		var v string
		switch rng.IntN(3) {
		case 0:
			v = local + "@" + written
		case 1:
			v, relay = "https://"+written+"/pay", false
		default:
			v = "mailto:" + local + "@" + written
		}
		asRef := rng.IntN(3) == 0
		e := effectWith(`{"subject":"x"}`)
		if asRef {
			e.Refs = []canon.Ref{{Name: v, Kind: "url", Unbound: "not fetched"}}
		} else {
			args, err := json.Marshal(map[string]string{"to": v})
			require.NoError(t, err)
			e = effectWith(string(args))
		}
		c := mustRender(t, e, ctx)
		arg, refs := argDomains(t, c)
		doms := arg
		if asRef {
			require.Len(t, refs, 1)
			doms = refs[0]
		}
		require.NotEmpty(t, doms, v)
		d := doms[0]
		lookedUp := strings.ToLower(base)
		want, err := publicsuffix.EffectiveTLDPlusOne(lookedUp)
		require.NoError(t, err)
		assert.Equal(t, want, d.Registrable, v)
		trusted := want == "example.com" || want == "example.co.uk"
		wantBadge := trusted && dots <= 1 && !relay
		assert.Equal(t, wantBadge, d.Trusted, "%s (reference: %v): %+v", v, asRef, d)
		if d.Trusted {
			badged++
		}
		assert.Equal(t, dots > 1, slices.Contains(d.Warnings, "empty-label"), v)
	}
	assert.Greater(t, badged, 30)
}

// TestAddressCommentsAndSpacesNameTheirDomain: an address written with
// RFC 5322's comments and white space after its @ or around its domain's
// dots (which mail software reads as the domain they surround) lists that
// domain first, whatever comment stands there (a trusted address
// included), and is never badged.
func TestAddressCommentsAndSpacesNameTheirDomain(t *testing.T) {
	ctx := injectivityContext()
	ctx.Trusted = []string{"example.com"}
	rng := rand.New(rand.NewPCG(22, 5))
	gaps := []string{" ", "  ", "(c)", " (c) ", "(finance@example.com)", "(a (b) c)", `(a\)b)`, "(example.com) ", "( )"}
	gap := func() string { return gaps[rng.IntN(len(gaps))] }
	for range 300 {
		labels := []string{"evil", "net"}
		if rng.IntN(3) == 0 {
			labels = []string{"mail", "evil", "net"}
		}
		to := "finance@" + gap()
		for i, l := range labels {
			if i > 0 {
				switch rng.IntN(4) {
				case 0:
					to += "."
				case 1:
					to += gap() + "."
				case 2:
					to += "." + gap()
				default:
					to += gap() + "." + gap()
				}
			}
			to += l
		}
		if rng.IntN(2) == 0 {
			to = strings.Replace(to, "finance@", "finance@"+gap(), 1)
		}
		args, err := json.Marshal(map[string]string{"to": to})
		require.NoError(t, err)
		c := mustRender(t, effectWith(string(args)), ctx)
		doms, _ := argDomains(t, c)
		require.NotEmpty(t, doms, "%q", to)
		assert.Equal(t, "evil.net", doms[0].Registrable, "%q", to)
		assert.False(t, doms[0].Trusted, "%q", to)
		text, html, js := badged(t, c)
		assert.False(t, text || html || js, "%q is badged", to)
	}
}
