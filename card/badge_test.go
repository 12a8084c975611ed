package card_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// decoys are spellings of a value that sends something to evil.net while
// naming the trusted example.com somewhere: quoted local parts, extra @s,
// user info, paths, queries, fragments, backslashes, tabs and newlines
// that browsers strip, display names, lists. %s is a scheme.
var decoys = []string{
	`"finance@example.com"@evil.net`,
	`finance@example.com@evil.net`,
	`"finance@example.com" <x@evil.net>`,
	`Finance at example.com <x@evil.net>`,
	`x@evil.net (finance@example.com)`,
	`finance@example.com, x@evil.net`,
	`finance@example.com x@evil.net`,
	`mailto:finance@example.com,x@evil.net`,
	`%s://evil.net/@example.com`,
	`%s://evil.net#@example.com`,
	`%s://evil.net?@example.com`,
	`%s://evil.net\@example.com/`,
	`%s://evil.net\\@example.com/`,
	`%s://example.com@evil.net/`,
	`%s://finance@example.com@evil.net/`,
	`%s://example.com:443@evil.net`,
	"%s://example.com\t.evil.net/",
	"%s://example.com\n.evil.net/",
	"%s://example.com\r\n.evil.net/",
	`%s://example.com.evil.net/`,
	`%s://example.com%%2eevil.net/`,
	`%s:example.com.evil.net`,
	`%s://evil.net/?next=https://example.com`,
	`%s://example.com/ and %s://evil.net/`,
	`%s://example.com/@evil.net`,
	`see %s://example.com`,
	"%s://exa\tmple.com/",
}

// honest are single addresses and URLs at the trusted domain.
var honest = []string{
	`finance@example.com`,
	`Finance <finance@example.com>`,
	`mailto:finance@example.com`,
	`mailto:finance@example.com?subject=Q3`,
	`%s://example.com/`,
	`%s://example.com/path?q=1#top`,
	`%s://mail.example.com:8443/x`,
	`%s://user@example.com/`,
	`%s://EXAMPLE.com`,
}

var schemes = []string{"https", "http", "HTTPS", "wss", "ftp"}

// spellings expands templates over schemes and over where the value sits:
// an argument, a list item, an object key.
func spellings(tmpls []string) []string {
	var out []string
	for _, tmpl := range tmpls {
		for _, s := range schemes {
			v := strings.ReplaceAll(tmpl, "%s", s)
			v = strings.ReplaceAll(v, "%%", "%")
			out = append(out, v)
			if !strings.Contains(tmpl, "%s") {
				break
			}
		}
	}
	return out
}

// badged reports whether any view of c shows a TRUSTED badge.
func badged(t *testing.T, c *card.Card) (text, html, json bool) {
	t.Helper()
	js, err := c.JSON()
	require.NoError(t, err)
	return strings.Contains(c.Text(), ", TRUSTED"), strings.Contains(string(c.HTML()), "asu-badge-ok"),
		strings.Contains(string(js), `"trusted":true`)
}

// TestTrustedBadgeOnlyForOneHost: a value earns the TRUSTED badge only
// when it is exactly one address or URL at a trusted domain. Every decoy
// spelling, as an argument, a list item or an object key, shows no badge in
// any view, and the card says why; every honest spelling shows it.
func TestTrustedBadgeOnlyForOneHost(t *testing.T) {
	ctx := injectivityContext()
	n := 0
	for _, v := range spellings(decoys) {
		for _, args := range []map[string]any{{"to": v}, {"cc": []any{v}}, {"cc": map[string]any{v: "Finance"}}} {
			c, err := card.Render(argsEffect(args), ctx)
			if errors.Is(err, card.ErrUnrenderable) {
				continue // refused: no card, no badge
			}
			require.NoError(t, err, "%q", v)
			text, html, js := badged(t, c)
			assert.False(t, text || html || js, "%q in %v earns a badge (text %v, html %v, json %v):\n%s", v, args, text, html, js, c.Text())
			if strings.Contains(v, "evil.net") {
				assert.Contains(t, c.Text(), "evil.net", "%q: the real destination is named", v)
			}
			n++
		}
	}
	assert.Greater(t, n, 200)
	for _, v := range spellings(honest) {
		for _, args := range []map[string]any{{"to": v}, {"cc": []any{v}}, {"cc": map[string]any{v: "Finance"}}} {
			c := mustRender(t, argsEffect(args), ctx)
			text, html, js := badged(t, c)
			assert.True(t, text && html && js, "%q in %v earns no badge:\n%s", v, args, c.Text())
		}
	}
}

// TestTrustedBadgeCheckCatchesNaive: a view that badges any trusted host
// it finds in a value (the card before this rule) badges most decoys.
func TestTrustedBadgeCheckCatchesNaive(t *testing.T) {
	host := regexp.MustCompile(`(?:@|://)([A-Za-z0-9.-]+)`)
	naive := func(v string) bool {
		for _, m := range host.FindAllStringSubmatch(v, -1) {
			if m[1] == "example.com" || strings.HasSuffix(m[1], ".example.com") {
				return true
			}
		}
		return false
	}
	fooled := 0
	all := spellings(decoys)
	for _, v := range all {
		if naive(v) {
			fooled++
		}
	}
	assert.Greater(t, fooled, len(all)/2, "the naive rule should badge most decoys")
}

// TestDecoysSayWhy: a value that is not one address or URL, or whose text
// before the host holds an @, says so on the card.
func TestDecoysSayWhy(t *testing.T) {
	ctx := injectivityContext()
	for v, want := range map[string]string{
		`finance@example.com@evil.net`:       "is not exactly one address or URL",
		`"finance@example.com"@evil.net`:     "THIS host is where it goes",
		`https://example.com@evil.net/`:      "THIS host is where it goes",
		`finance@example.com, x@evil.net`:    "is not exactly one address or URL",
		"https://example.com\t.evil.net/":    "contains a trusted domain",
		`"finance@example.com" <x@evil.net>`: "THIS host is where it goes",
	} {
		c := mustRender(t, argsEffect(map[string]any{"to": v}), ctx)
		assert.Contains(t, c.TextWidth(1000), want, "%q", v)
		assert.Contains(t, string(c.HTML()), want, "%q", v)
	}
}

// TestKeysAreAnalysed: an address used as an object key or argument name
// is checked like a value, in every view.
func TestKeysAreAnalysed(t *testing.T) {
	ctx := injectivityContext()
	for _, args := range []map[string]any{
		{"cc": map[string]any{"finance@exarnple.com": "Finance"}},
		{"finance@exarnple.com": "Finance"},
	} {
		c := mustRender(t, argsEffect(args), ctx)
		text := c.TextWidth(1000)
		assert.Contains(t, text, "in the name: domain exarnple.com")
		assert.Contains(t, text, "LOOKS LIKE a trusted domain but is a different one: example.com")
		assert.Contains(t, string(c.HTML()), "LOOKS LIKE")
		js, err := c.JSON()
		require.NoError(t, err)
		assert.Regexp(t, `"(key|name)_domains":\[\{"ascii":"exarnple.com"`, string(js))
	}
	c := mustRender(t, argsEffect(map[string]any{"to": "finance@example.com", "\uff54o": "finance@evil.net"}), ctx)
	text := c.TextWidth(1000)
	assert.Contains(t, text, `"\u{FF54}o": "finance@evil.net"`)
	assert.Contains(t, text, "(!) the name contains compatibility characters")
	assert.Contains(t, string(c.HTML()), "the name contains compatibility characters")
}

// TestDeclaredDomainsWithPorts: an argument the catalog declares as a
// host name is analysed with or without a port.
func TestDeclaredDomainsWithPorts(t *testing.T) {
	ctx := injectivityContext()
	ctx.Hints.Domains = []string{"host"}
	for v, want := range map[string]string{
		"example.com:8443":  "domain example.com, TRUSTED",
		"exarnple.com:8443": "LOOKS LIKE a trusted domain but is a different one: example.com",
		"exarnple.com":      "LOOKS LIKE a trusted domain but is a different one: example.com",
		"[2001:db8::1]:443": "is an IP address",
	} {
		c := mustRender(t, argsEffect(map[string]any{"host": v}), ctx)
		assert.Contains(t, c.TextWidth(1000), want, v)
	}
	_, err := card.Render(argsEffect(map[string]any{"host": "example.com:https"}), ctx)
	assert.ErrorIs(t, err, card.ErrUnrenderable)
}

// TestPublicSuffixRefusedAsTrusted: trusting a public suffix would trust
// every domain under it; the renderer refuses such a context, at
// configuration and at render time.
func TestPublicSuffixRefusedAsTrusted(t *testing.T) {
	for _, suffix := range []string{"com", "github.io", "co.uk", "blogspot.com", "appspot.com"} {
		ctx := injectivityContext()
		ctx.Trusted = []string{"example.com", suffix}
		assert.ErrorIs(t, card.Renderer{}.CheckContext(ctx), card.ErrBadContext, suffix)
		_, err := card.Render(effectWith(`{"to":"x@attacker.github.io"}`), ctx)
		assert.ErrorIs(t, err, card.ErrBadContext, suffix)
	}
	ctx := injectivityContext()
	ctx.Trusted = []string{"example.com", "dana.github.io"}
	c := mustRender(t, effectWith(`{"to":"https://dana.github.io/x","cc":"https://mallory.github.io/x"}`), ctx)
	assert.Equal(t, 1, strings.Count(c.Text(), ", TRUSTED"), c.Text())
}

// TestHostsPastTheBudgetAreNeverTrusted: a card naming more distinct
// hosts than it analyses lists the first ones analysed, says of every
// later value that its hosts were not analysed, and never badges one of
// those, even the trusted domain itself or an address it would refuse.
func TestHostsPastTheBudgetAreNeverTrusted(t *testing.T) {
	ctx := injectivityContext()
	list := make([]any, 0, 5000)
	for i := range 5000 {
		list = append(list, fmt.Sprintf("x@h%d.example.net", i))
	}
	early := mustRender(t, argsEffect(map[string]any{"cc": list[:10], "to": "finance@example.com"}), ctx)
	text, html, js := badged(t, early)
	require.True(t, text && html && js, "the honest recipient is badged on a small card")

	// The recipient comes first and is analysed; "zy" and "zz" come
	// after the list.
	c := mustRender(t, argsEffect(map[string]any{"cc": list, "zy": "finance@example.com", "zz": "x@exa\u200bmple.com"}), ctx)
	text, html, js = badged(t, c)
	assert.False(t, text || html || js, "a host past the budget is badged")
	out := c.Text()
	assert.Contains(t, out, "domain h1.example.net", "the first hosts are analysed")
	assert.NotContains(t, out, "domain h4999.example.net", "a host past the budget is not listed as analysed")
	assert.Contains(t, out, "this value's other hosts are not analysed")
	assert.Contains(t, string(c.HTML()), "this value&#39;s other hosts are not analysed")
	js2, err := c.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(js2), `"not-analysed"`)
}
