package card

import (
	"errors"
	"testing"

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
		{"wikipedia.org", "vvikipedia.org"},
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

func TestFindHosts(t *testing.T) {
	cases := []struct {
		in     string
		asHost bool
		want   []hostHit
	}{
		{"finance@example.com", false, []hostHit{{"example.com", true}}},
		{"Dana <dana@example.com>", false, []hostHit{{"example.com", false}}},
		{"a@x.com, b@y.org", false, []hostHit{{"x.com", false}, {"y.org", false}}},
		{"https://user@evil.example.net:8443/path?q=1", false, []hostHit{{"evil.example.net", true}}},
		{"see https://[::1]/x", false, []hostHit{{"::1", false}}},
		{"meet @ 5pm", false, nil},
		{"example.com", true, []hostHit{{"example.com", true}}},
		{"example.com", false, nil},
		{"x@exa\u200bmple.com", false, []hostHit{{"exa\u200bmple.com", true}}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, findHosts(tc.in, tc.asHost), tc.in)
	}
}

func TestAnalyzeHost(t *testing.T) {
	trusted, err := prepareTrusted([]string{"example.com", "paypal.com", "mail.corp.example.org"})
	require.NoError(t, err)
	esc := escaper{quote: true}
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
		{host: "exarnple.com", ascii: "exarnple.com", registrable: "exarnple.com", looksLike: "example.com", warnings: []string{warnLookalike}},
		{host: "p\u0430ypal.com", ascii: "xn--pypal-4ve.com", registrable: "xn--pypal-4ve.com", looksLike: "paypal.com",
			warnings: []string{warnMixedScript, warnLookalike}},
		{host: "xn--pypal-4ve.com", ascii: "xn--pypal-4ve.com", registrable: "xn--pypal-4ve.com", looksLike: "paypal.com",
			warnings: []string{warnMixedScript, warnHiddenNonASCII, warnLookalike}},
		{host: "\u0440\u0430\u0443\u0440\u0430l.com", ascii: "xn--l-7sba6dbr.com", registrable: "xn--l-7sba6dbr.com", looksLike: "paypal.com",
			warnings: []string{warnMixedScript, warnLookalike}},
		{host: "\u0430\u0440\u0440\u0435.com", ascii: "xn--80ak6aa.com", registrable: "xn--80ak6aa.com",
			warnings: []string{warnLookalikeLabel}},
		{host: "b\u00fccher.de", ascii: "xn--bcher-kva.de", registrable: "xn--bcher-kva.de", unicode: "b\u00fccher.de"},
		{host: "\u4f8b\u3048.jp", ascii: "xn--r8jz45g.jp", registrable: "xn--r8jz45g.jp", unicode: "\u4f8b\u3048.jp"},
		{host: "example.com.evil.net", ascii: "example.com.evil.net", registrable: "evil.net", looksLike: "example.com",
			warnings: []string{warnContainsTrusted}},
		{host: "corp.example.org", ascii: "corp.example.org", registrable: "example.org"},
		{host: "co.uk", ascii: "co.uk", warnings: []string{warnNoRegistrable}},
		{host: "intranet.corp", ascii: "intranet.corp", registrable: "intranet.corp", warnings: []string{warnUnlistedSuffix}},
		{host: "192.0.2.1", ascii: "192.0.2.1", warnings: []string{warnIP}},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			d, err := analyzeHost(hostHit{host: tc.host, whole: true}, trusted, esc)
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
		_, err := analyzeHost(hostHit{host: h, whole: true}, nil, escaper{})
		assert.True(t, errors.Is(err, ErrUnrenderable), "%q: %v", h, err)
	}
}

func TestPrepareTrustedRefuses(t *testing.T) {
	_, err := prepareTrusted([]string{"example.com", "not a domain"})
	assert.ErrorIs(t, err, ErrBadContext)
}
