package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
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
			d, err := analyzeHost(tc.host, true, trusted, esc)
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
		_, err := analyzeHost(h, true, nil, escaper{})
		assert.True(t, errors.Is(err, ErrUnrenderable), "%q: %v", h, err)
	}
}

func TestPrepareTrustedRefuses(t *testing.T) {
	for _, list := range [][]string{
		{"example.com", "not a domain"},
		{"com"}, {"github.io"}, {"co.uk"}, {"s3.amazonaws.com"}, {"192.0.2.1"}, {""},
	} {
		_, err := prepareTrusted(list)
		assert.ErrorIs(t, err, ErrBadContext, "%q", list)
	}
	_, err := prepareTrusted([]string{"example.com", "user.github.io", "example.co.uk"})
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

// TestModelFieldsInCanonicalOrder: seal relies on encoding/json writing
// members in RFC 8785 order, which holds when every struct of the model
// declares its fields in the order of their JSON names.
func TestModelFieldsInCanonicalOrder(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var check func(reflect.Type)
	check = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		prev := ""
		for i := range ty.NumField() {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			require.NotEmpty(t, name, "%s.%s has no JSON name", ty.Name(), f.Name)
			require.Less(t, prev, name, "%s: %q declared after %q", ty.Name(), name, prev)
			prev = name
			check(f.Type)
		}
	}
	check(reflect.TypeOf(model{}))
	assert.Greater(t, len(seen), 8)
}

// TestEncodeModelMatchesEncodingJSON: the hand-written card JSON is what
// encoding/json writes for the model (struct tags name the members), and
// is canonical.
func TestEncodeModelMatchesEncodingJSON(t *testing.T) {
	step := shown{Text: "2"}
	m := model{
		Renderer: RendererID, Digest: "ab",
		Tool: toolPart{Name: shown{Text: "t", Flags: []string{flagInvisible}}, Title: shown{Text: "T"}, Class: ClassRead},
		Args: []field{{
			Name: shown{Text: "a\"b\\c\u0001"}, Label: &shown{Text: "L"}, Role: "amount", Unit: &shown{Text: "u"},
			Currency: &shown{Text: "EUR"}, NameDoms: []domainPart{{Written: shown{Text: "w"}, ASCII: "x.com", Trusted: true}},
			Value: node{Kind: kindObject, Flags: []string{flagEmpty}, Members: []member{{
				Key: shown{Text: "k"}, KeyDoms: []domainPart{{Written: shown{Text: "y"}, ASCII: "y.com", Registrable: "y.com",
					Unicode: "ÿ.com", Scripts: "Latin", LooksLike: "x.com", Warnings: []string{warnLookalike}}},
				Value: node{Kind: kindArray, Items: []node{{Kind: kindString, Text: "s", Long: &longPart{Bytes: 3, SHA256: "cd", Full: "sss"},
					Domains: []domainPart{{Written: shown{Text: "z"}}}}}},
			}}},
		}},
		Refs:    []refPart{{Index: 0, Name: shown{Text: "n"}, Kind: shown{Text: "file"}, SHA256: "ef", Size: 9}},
		Unbound: []refPart{{Index: 1, Name: shown{Text: "u"}, Kind: shown{Text: "url"}, Reason: &shown{Text: "r"}}},
		Context: contextPart{PolicyVersion: shown{Text: "p"}, Reasons: []shown{{Text: "r"}}, Provenance: []shown{},
			Task: shown{Text: "t"}, Step: &step, User: shown{Text: "u"}, Agent: shown{Text: "a"}, Delegations: []shown{{Text: "d"}}, Audience: shown{Text: "x"}},
		Untrusted: untrustedPart{Rationale: block{Text: "why\n", Flags: []string{flagLines}, Long: &longPart{Bytes: 1}}},
	}
	_ = step
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(m))
	got := encodeModel(&m, 0)
	assert.Equal(t, strings.TrimSuffix(buf.String(), "\n"), string(got))
	c, err := HashLimits().Canonicalize(got)
	require.NoError(t, err)
	assert.Equal(t, string(c), string(got))
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
