package card_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// randomPct percent-encodes a random choice of the bytes of s, as a
// mailto: URI or a URL may.
func randomPct(rng *rand.Rand, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "%%%02x", s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// randomCase changes the case of a random choice of the letters of s.
func randomCase(rng *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' && rng.IntN(2) == 0 {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestMailtoRecipientsListedAndNeverTrusted: a mailto: URI at a trusted
// address with a second recipient at another host, wherever RFC 6068 lets
// it hide (the path's list, a to, cc or bcc field in any case, names and
// values partly or wholly percent-encoded, with fields that carry no
// address around it), shows no TRUSTED badge in any view, says the value
// is not one address, and names the other host in every view. The same
// URIs with both recipients at the trusted host keep the badge, so the
// rule is not "no mailto: URI is trusted".
func TestMailtoRecipientsListedAndNeverTrusted(t *testing.T) {
	ctx := injectivityContext()
	rng := rand.New(rand.NewPCG(42, 6068))
	// An honest second recipient is spelled plainly, with its @ encoded,
	// or wholly encoded: a partial escape such as "example.c%6f%6d" reads
	// as another host ("example.c") to a hurried reader, and the card
	// names it so and denies the badge, which this test does not claim
	// otherwise.
	whole := func(rng *rand.Rand, s string) string {
		switch rng.IntN(3) {
		case 0:
			return s
		case 1:
			return strings.ReplaceAll(s, "@", "%40")
		}
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	}
	uri := func(second string, pct func(*rand.Rand, string) string) string {
		scheme := randomCase(rng, "mailto")
		if rng.IntN(4) == 0 {
			return scheme + ":finance@example.com," + pct(rng, second)
		}
		name := randomCase(rng, []string{"to", "cc", "bcc"}[rng.IntN(3)])
		if rng.IntN(2) == 0 {
			name = randomPct(rng, name)
		}
		fields := []string{name + "=" + pct(rng, second)}
		for range rng.IntN(3) {
			f := []string{"subject=Q3", "body=see%20attached", "SUBJECT=x%20y"}[rng.IntN(3)]
			k := rng.IntN(len(fields) + 1)
			fields = append(fields[:k], append([]string{f}, fields[k:]...)...)
		}
		return scheme + ":finance@example.com?" + strings.Join(fields, "&")
	}
	for range 300 {
		evil := uri("x@evil.net", randomPct)
		c, err := card.Render(argsEffect(map[string]any{"to": evil}), ctx)
		require.NoError(t, err, evil)
		text, html, js := badged(t, c)
		require.False(t, text || html || js, "%s earns a badge:\n%s", evil, c.Text())
		assert.Contains(t, c.Text(), "domain evil.net", evil)
		assert.Contains(t, c.Text(), "is not exactly one address or URL", evil)
		assert.Contains(t, string(c.HTML()), "evil.net", evil)
		jsb, err := c.JSON()
		require.NoError(t, err)
		assert.Contains(t, string(jsb), `"ascii":"evil.net"`, evil)

		honest := uri("ap@example.com", whole)
		c, err = card.Render(argsEffect(map[string]any{"to": honest}), ctx)
		require.NoError(t, err, honest)
		text, html, js = badged(t, c)
		require.True(t, text && html && js, "%s lost its badge:\n%s", honest, c.Text())
	}
}

// TestSchemeThatSendsNothingNeverTrusted: a URL with a trusted host earns
// the badge only when its scheme sends something to that host; with any
// other scheme the host is listed with the card's own warning, which names
// no scheme the agent wrote.
func TestSchemeThatSendsNothingNeverTrusted(t *testing.T) {
	ctx := injectivityContext()
	rng := rand.New(rand.NewPCG(5, 8))
	sends := map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}
	schemes := []string{"http", "https", "ws", "wss", "ftp", "javascript", "vbscript", "data", "file", "blob", "ssh", "git+ssh", "chrome-extension", "evilnet"}
	for range 300 {
		scheme := schemes[rng.IntN(len(schemes))]
		v := randomCase(rng, scheme) + "://" + []string{"example.com", "finance@example.com", "example.com:8443"}[rng.IntN(3)] +
			[]string{"", "/", "/%0Aalert(1)", "/,hello"}[rng.IntN(4)]
		c, err := card.Render(argsEffect(map[string]any{"to": v}), ctx)
		require.NoError(t, err, v)
		text, html, js := badged(t, c)
		assert.Equal(t, sends[scheme], text, v)
		assert.Equal(t, sends[scheme], html, v)
		assert.Equal(t, sends[scheme], js, v)
		assert.Equal(t, !sends[scheme], strings.Contains(c.Text(), "scheme sends nothing to this host"), "%s:\n%s", v, c.Text())
	}
}

// TestInvalidPortNeverBadged: a URL with a port the WHATWG URL standard
// refuses (above 65535, however many leading zeros) is not a URL, and shows
// no badge; every valid port keeps it.
func TestInvalidPortNeverBadged(t *testing.T) {
	ctx := injectivityContext()
	rng := rand.New(rand.NewPCG(65535, 1))
	for range 300 {
		port := rng.IntN(1 << 20)
		v := "https://example.com:" + strings.Repeat("0", rng.IntN(3)) + fmt.Sprint(port) + "/"
		c, err := card.Render(argsEffect(map[string]any{"to": v}), ctx)
		require.NoError(t, err, v)
		text, html, js := badged(t, c)
		valid := port <= 65535
		assert.Equal(t, valid, text && html && js, v)
		assert.False(t, !valid && (text || html || js), v)
	}
}
