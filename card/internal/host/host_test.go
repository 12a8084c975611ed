package host

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentstepup/asu/card/internal/confusable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkeleton(t *testing.T) {
	same := [][2]string{
		{"example.com", "exarnple.com"},
		{"example.com", "ex\u0430mple.com"},
		{"paypal.com", "p\u0430yp\u0430l.com"},
		{"paypal.com", "paypa1.com"},
		{"google.com", "g00gle.com"},
		{"google.com", "g\u03bf\u03bfgle.com"},
		{"apple.com", "\u0430\u0440\u0440l\u0435.com"},
	}
	for _, p := range same {
		assert.Equal(t, skeleton(p[0]), skeleton(p[1]), "%s vs %s", p[0], p[1])
	}
	different := [][2]string{
		{"example.com", "examples.com"},
		{"paypal.com", "paypal.co"},
		{"bank.com", "b\u00e4nk.com"},
	}
	for _, p := range different {
		assert.NotEqual(t, skeleton(p[0]), skeleton(p[1]), "%s vs %s", p[0], p[1])
	}
}

// TestParseWhole: a value is exactly one address, URL or declared host,
// read the way mail software and browsers read it, or it is not.
func TestParseWhole(t *testing.T) {
	cases := []struct {
		in     string
		asHost bool
		host   string // "" when the value is not exactly one
		decoy  bool
		clean  bool
	}{
		{"finance@example.com", false, "example.com", false, true},
		{"Dana <dana@example.com>", false, "example.com", false, true},
		{`"finance@example.com"@evil.net`, false, "evil.net", true, false},
		{"finance@example.com@evil.net", false, "", false, false},
		{"a@x.com, b@y.org", false, "", false, false},
		{`"Finance" <x@evil.net>`, false, "evil.net", false, true},
		{`finance@example.com <x@evil.net>`, false, "", false, false},
		{"https://user@evil.example.net:8443/path?q=1", false, "evil.example.net", false, true},
		{"https://example.com@evil.net/", false, "evil.net", true, true},
		{"https://evil.net/@example.com", false, "evil.net", false, true},
		{"https://evil.net#@example.com", false, "evil.net", false, true},
		{"https://evil.net?@example.com", false, "evil.net", false, true},
		{`https://evil.net\@example.com/`, false, "evil.net", false, true},
		{"https://example.com\t.evil.net/", false, "example.com.evil.net", false, false},
		{"https://exa\nmple.com/", false, "example.com", false, false},
		{`https:\\example.com/x`, false, "example.com", false, true},
		{"HTTPS:example.com", false, "example.com", false, true},
		{"https://ex%61mple.com/", false, "example.com", false, true},
		{"https://[::1]:8080/x", false, "::1", false, true},
		{"mailto:finance@example.com?subject=x", false, "example.com", false, true},
		{"ftp://files.example.org", false, "files.example.org", false, true},
		{"git+ssh://git@example.org/repo", false, "example.org", false, true},
		{"javascript:alert(1)", false, "", false, false},
		{"https://example.com:99999/", false, "", false, false},
		{"https://example.com:65536", false, "", false, false},
		{"https://example.com:0065535/", false, "example.com", false, true},
		{"https://example.com:/", false, "example.com", false, true},
		{"mailto:finance@example.com?bcc=x%40evil.net", false, "example.com", false, true},
		{"mailto:?to=finance%40example.com", false, "example.com", false, true},
		{"see https://example.com", false, "", false, false},
		{"meet @ 5pm", false, "", false, false},
		{"example.com", true, "example.com", false, true},
		{"example.com:8443", true, "example.com", false, true},
		{"[2001:db8::1]:443", true, "2001:db8::1", false, true},
		{"example.com:http", true, "", false, false},
		{"[@]", true, "", false, false},
		{"[example.com]", true, "", false, false},
		{"[a@example.com]:80", true, "", false, false},
		{"[fe80::1%eth0]", true, "", false, false},
		{"[1.2.3.4]", true, "", false, false},
		{"https://[evil.net]/", false, "", false, false},
		{"https://[::ffff:1.2.3.4]/", false, "::ffff:1.2.3.4", false, true},
		{"example.com", false, "", false, false},
		{"ops@[192.0.2.7]", false, "192.0.2.7", false, true},
		{"ops@[IPv6:2001:db8::7]", false, "2001:db8::7", false, true},
		{"ops@[]", false, "", false, false},
		{"ops@[IPv6:]", false, "", false, false},
		{"mailto:ops@[]", false, "", false, false},
		{"ops@[evil.net/x]", false, "", false, false},
		{"ops@[IPv6:192.0.2.7]", false, "", false, false},
		{"ops@[2001:db8::7]", false, "", false, false},
		{"ops@[x:evil.net]", false, "", false, false},
		{"ops@[IPv6:fe80::1%eth0]", false, "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseWhole(tc.in, tc.asHost)
			if tc.host == "" {
				assert.False(t, ok, "parsed as one, host %q", got.host)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.host, got.host)
			assert.Equal(t, tc.decoy, got.decoy, "decoy")
			assert.Equal(t, tc.clean, got.clean, "clean")
		})
	}
}

// TestScanHosts: every host a reader could take a value to name is found,
// more than the whole-value parsers find.
func TestScanHosts(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"finance@example.com", []string{"example.com"}},
		{"finance@example.com@evil.net", []string{"example.com", "evil.net"}},
		{`"finance@example.com"@evil.net`, []string{"example.com", "evil.net"}},
		{"https://evil.net/@example.com", []string{"evil.net", "example.com"}},
		{"write to a@x.com or see https://y.org/page now", []string{"x.com", "y.org"}},
		{"https://example.com\t.evil.net/", []string{"example.com.evil.net"}},
		{"meet @ 5pm", nil},
		{"no hosts here", nil},
	}
	for _, tc := range cases {
		assert.ElementsMatch(t, tc.want, scanHosts(tc.in), tc.in)
	}
}

func TestAnalyzeHost(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com", "paypal.com", "mail.corp.example.org"})
	require.NoError(t, err)
	cases := []struct {
		host        string
		ascii       string
		registrable string
		unicode     string
		trusted     bool
		looksLike   string
		warnings    []string
	}{
		{host: "example.com", ascii: "example.com", registrable: "example.com", trusted: true},
		{host: "mail.example.com", ascii: "mail.example.com", registrable: "example.com", trusted: true},
		{host: "EXAMPLE.com", ascii: "example.com", registrable: "example.com", trusted: true},
		{host: "exarnple.com", ascii: "exarnple.com", registrable: "exarnple.com", looksLike: "example.com", warnings: []string{WarnLookalike}},
		{host: "p\u0430ypal.com", ascii: "xn--pypal-4ve.com", registrable: "xn--pypal-4ve.com", looksLike: "paypal.com",
			warnings: []string{WarnMixedScript, WarnLookalike}},
		{host: "xn--pypal-4ve.com", ascii: "xn--pypal-4ve.com", registrable: "xn--pypal-4ve.com", looksLike: "paypal.com",
			warnings: []string{WarnMixedScript, WarnHiddenNonASCII, WarnLookalike}},
		{host: "\u0440\u0430\u0443\u0440\u0430l.com", ascii: "xn--l-7sba6dbr.com", registrable: "xn--l-7sba6dbr.com", looksLike: "paypal.com",
			warnings: []string{WarnMixedScript, WarnLookalike}},
		{host: "\u0430\u0440\u0440\u0435.com", ascii: "xn--80ak6aa.com", registrable: "xn--80ak6aa.com",
			warnings: []string{WarnLookalikeLabel}},
		{host: "b\u00fccher.de", ascii: "xn--bcher-kva.de", registrable: "xn--bcher-kva.de", unicode: "b\u00fccher.de"},
		{host: "\u4f8b\u3048.jp", ascii: "xn--r8jz45g.jp", registrable: "xn--r8jz45g.jp", unicode: "\u4f8b\u3048.jp"},
		{host: "example.com.evil.net", ascii: "example.com.evil.net", registrable: "evil.net", looksLike: "example.com",
			warnings: []string{WarnContainsTrusted}},
		{host: "corp.example.org", ascii: "corp.example.org", registrable: "example.org"},
		{host: "co.uk", ascii: "co.uk", warnings: []string{WarnNoRegistrable}},
		{host: "intranet.corp", ascii: "intranet.corp", registrable: "intranet.corp", warnings: []string{WarnUnlistedSuffix}},
		{host: "192.0.2.1", ascii: "192.0.2.1", warnings: []string{WarnIP}},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			d, err := analyzeHost(tc.host, true, trusted, &scratch{})
			require.NoError(t, err)
			assert.Equal(t, tc.ascii, d.ASCII)
			assert.Equal(t, tc.registrable, d.Registrable)
			assert.Equal(t, tc.unicode, d.Unicode)
			assert.Equal(t, tc.trusted, d.Trusted)
			assert.Equal(t, tc.looksLike, d.LooksLike)
			assert.ElementsMatch(t, tc.warnings, d.Warnings)
		})
	}
}

func TestAnalyzeHostRefuses(t *testing.T) {
	for _, h := range []string{"foo_bar.com", "exa\u200bmple.com", "a..com", "-x.com", "x\u202e.com", "exa\u00admple.com", "ex\u2060ample.com", "\u05d0a.com",
		string(make([]byte, 300))} {
		_, err := analyzeHost(h, true, nil, &scratch{})
		assert.Error(t, err, "%q", h)
	}
}

func TestPrepareTrustedRefuses(t *testing.T) {
	for _, list := range [][]string{
		{"example.com", "not a domain"},
		{"com"}, {"github.io"}, {"co.uk"}, {"s3.amazonaws.com"}, {"192.0.2.1"}, {""},
	} {
		_, err := PrepareTrusted(list)
		assert.Error(t, err, "%q", list)
	}
	_, err := PrepareTrusted([]string{"example.com", "user.github.io", "example.co.uk"})
	assert.NoError(t, err)
}

// TestPlainHostAgreesWithIDNA: the ASCII fast path gives what strict IDNA
// gives, for generated names around every rule it checks.
func TestPlainHostAgreesWithIDNA(t *testing.T) {
	parts := []string{"a", "Z", "0", "-", ".", "xn--", "ab--c", "a-b", strings.Repeat("x", 63), strings.Repeat("y", 64), "_", "é", ""}
	rng := rand.New(rand.NewPCG(5, 8))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		h := b.String()
		fast, ok := plainHost(h)
		if !ok {
			continue
		}
		slow, err := strictIDNA.ToASCII(h)
		require.NoError(t, err, "%q", h)
		require.Equal(t, slow, fast, "%q", h)
	}
}

// FuzzPlainHost: whenever the fast path accepts a name, strict IDNA
// accepts it with the same result.
func FuzzPlainHost(f *testing.F) {
	for _, s := range []string{"example.com", "EXAMPLE.com", "xn--pypal-4ve.com", "a-.com", "ab--c.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if fast, ok := plainHost(h); ok {
			slow, err := strictIDNA.ToASCII(h)
			require.NoError(t, err)
			require.Equal(t, slow, fast)
		}
	})
}

func TestHoldsLabels(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		want       bool
	}{
		{"example.com.evil.net", "example.com", true},
		{"mail.example.com", "example.com", true},
		{"example.com", "example.com", true},
		{"myexample.com.evil.net", "example.com", false},
		{"example.community.net", "example.com", false},
		{"xexample.com.example.com.net", "example.com", true},
		{"com", "example.com", false},
	} {
		assert.Equal(t, tc.want, holdsLabels(tc.name, tc.part), "%s in %s", tc.part, tc.name)
	}
}

// FuzzParseWhole: the address and URL parsers never panic, and a host
// they return is never empty and holds no character a host cannot.
//
//	go test ./card/internal/host -run '^$' -fuzz FuzzParseWhole -fuzztime 20s
func FuzzParseWhole(f *testing.F) {
	for _, s := range []string{`"a@b.c"@d.e`, "https://a.b\\@c.d/", "mailto:a@b.c", "x <a@b.c>", "[::1]:80", "https://a.b\t.c/", "a@b.c@d.e"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, asHost bool) {
		if got, ok := parseWhole(s, asHost); ok {
			require.NotEmpty(t, got.host)
			require.NotContains(t, got.host, "/")
			require.NotContains(t, got.host, "@")
		}
		for _, h := range scanHosts(s) {
			require.NotEmpty(t, h)
		}
	})
}

// TestSkeletonMatchesConfusable: the skeleton built in reused room is the
// one the confusables package computes, for names in many scripts.
func TestSkeletonMatchesConfusable(t *testing.T) {
	alphabet := []rune("aAeE0O1lIrnmM.-\u00e9\u00c9\u00fc\u0430\u0410\u03bf\u039f\u0131\u0301\u0308\u1e9e\u00df\u212a\u4f8b\u3048\u0915\u094d\u05d0\u13aa\uff45" +
		// Marks of different classes, characters whose decomposition
		// starts with a mark or reorders, Hangul, a ligature.
		"\u0316\u0323\u0345\u0344\u0f73\u0f71\u0f72\u1e69\u01d5\uac00\u1100\u1161\u11a8\ufb01\u0390\u1f80\u0958")
	rng := rand.New(rand.NewPCG(2, 71))
	var sc scratch
	for range 20000 {
		rs := make([]rune, 1+rng.IntN(10))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		want := strings.ToLower(confusable.Skeleton(strings.ToLower(s)))
		if !nonASCII(s) {
			want = ""
			for _, r := range strings.ToLower(s) {
				if sk, ok := confusable.Lookup(r); ok {
					want += strings.ToLower(sk)
				} else {
					want += string(r)
				}
			}
		}
		require.Equal(t, want, string(appendSkeleton(nil, s, &sc)), "%q", s)
	}
}

// skeletonByDefinition is the skeleton as UTS #39 defines it, lower-cased
// (what appendSkeleton computes; ASCII names map byte by byte).
func skeletonByDefinition(s string) string {
	if !nonASCII(s) {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if sk, ok := confusable.Lookup(r); ok {
				b.WriteString(strings.ToLower(sk))
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	return strings.ToLower(confusable.Skeleton(strings.ToLower(s)))
}

// TestSkeletonOfEveryConfusable: the skeleton built from each character's
// part is the whole string's, for every character the confusables data
// lists and every character its entries map to, alone, between letters,
// doubled and before combining marks of two classes.
func TestSkeletonOfEveryConfusable(t *testing.T) {
	var sc scratch
	seen := map[rune]bool{}
	check := func(r rune) {
		if seen[r] {
			return
		}
		seen[r] = true
		c := string(r)
		for _, s := range []string{c, "a" + c + "b", c + c, c + "\u0323\u0301x", "\u00fc" + c + ".com"} {
			require.Equal(t, skeletonByDefinition(s), string(appendSkeleton(nil, s, &sc)), "%q", s)
		}
	}
	for i := range confusable.Len() {
		r, sk := confusable.Entry(i)
		check(r)
		for _, q := range sk {
			check(q)
		}
	}
}

// FuzzSkeleton: the skeleton built from characters' parts (and remembered
// parts) is the one the definition gives, for any text.
//
//	go test ./card/internal/host -run '^$' -fuzz FuzzSkeleton -fuzztime 10s
func FuzzSkeleton(f *testing.F) {
	for _, s := range []string{"ex\u0430mple.com", "e\u0301", "\u0f73\u0323", "\uac00\u11a8", "b\u00fccher.de", "paypa1"} {
		f.Add(s, "g\u03bf\u03bfgle")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || len(a)+len(b) > 512 {
			return
		}
		var sc scratch
		for _, s := range []string{a, b, a + b, b + a} {
			require.Equal(t, skeletonByDefinition(s), string(appendSkeleton(nil, s, &sc)), "%q", s)
		}
	})
}

// TestUnanalysedSaysTheBudget: the warning names the number of analyses a
// card does.
func TestUnanalysedSaysTheBudget(t *testing.T) {
	assert.Contains(t, WarnText(WarnUnanalysed), "("+strconv.Itoa(MaxAnalysed)+")")
}
