package card_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// pctAll percent-encodes every byte of s, as a mailto URI may (RFC 6068
// decodes every hname and hvalue once).
func pctAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// mailtoExtraRecipients are mailto URIs whose path is one trusted address
// but whose header fields (RFC 6068: to, cc, bcc, in any case, their names
// and values percent-encoded) add a recipient at evil.net that no literal
// address in the value shows. A mail client opening any of them sends to
// evil.net too.
func mailtoExtraRecipients() []string {
	var out []string
	encodings := []func(string) string{
		func(s string) string { return strings.ReplaceAll(s, "@", "%40") },
		func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "@", "%40"), ".", "%2E") },
		pctAll,
	}
	for _, field := range []string{"to", "cc", "bcc", "Cc", "BCC", "To"} {
		names := []string{field, pctAll(field)}
		for _, name := range names {
			for _, enc := range encodings {
				for _, tmpl := range []string{
					"mailto:finance@example.com?%s=%s",
					"mailto:finance@example.com?subject=Q3&%s=%s",
					"mailto:finance@example.com?%s=%s&body=see%%20attached",
				} {
					out = append(out, fmt.Sprintf(tmpl, name, enc("x@evil.net")))
				}
			}
		}
	}
	return out
}

// TestTrustedBadgeMailtoHeaderRecipients: a mailto URI is exactly one
// address at a trusted domain only if its header fields add no recipient.
// A card that read only the path badged
// "mailto:finance@example.com?bcc=x%40evil.net" TRUSTED in every view and
// named no other host, although the mail goes to x@evil.net as well.
func TestTrustedBadgeMailtoHeaderRecipients(t *testing.T) {
	ctx := injectivityContext()
	// The honest control still earns the badge, so a fix cannot simply
	// drop badges from mailto URIs.
	text, html, js := badged(t, mustRender(t, argsEffect(map[string]any{"to": "mailto:finance@example.com?subject=Q3"}), ctx))
	require.True(t, text && html && js)
	vals := mailtoExtraRecipients()
	require.Greater(t, len(vals), 100)
	fooled := 0
	for _, v := range vals {
		for _, args := range []map[string]any{{"to": v}, {"cc": []any{v}}} {
			c, err := card.Render(argsEffect(args), ctx)
			if err != nil {
				continue // refused: no card, no badge
			}
			text, html, js := badged(t, c)
			if text || html || js {
				fooled++
				if fooled <= 3 {
					t.Errorf("%q earns a TRUSTED badge but also mails evil.net:\n%s", v, c.Text())
				}
			}
		}
	}
	assert.Zero(t, fooled, "of %d spellings", 2*len(vals))
}

// TestTrustedBadgeNeedsANetworkScheme: a URL whose scheme does not fetch
// from its host (javascript:, vbscript:, data:) sends nothing to it: the
// browser runs the script or shows the data. With "//example.com" as its
// authority it must still never be badged TRUSTED, e.g. a link that runs
// location=atob(...) to any site.
func TestTrustedBadgeNeedsANetworkScheme(t *testing.T) {
	ctx := injectivityContext()
	var vals []string
	for _, scheme := range []string{"javascript", "JavaScript", "JAVASCRIPT", "vbscript", "data"} {
		for _, rest := range []string{
			"//example.com/%0Alocation=atob('aHR0cHM6Ly9ldmlsLm5ldA')",
			"//example.com/%0Aalert(document.cookie)",
			"//finance@example.com/%0Aeval(name)",
			"//example.com",
			"//example.com/,hello",
		} {
			vals = append(vals, scheme+":"+rest)
		}
	}
	fooled := 0
	for _, v := range vals {
		c, err := card.Render(argsEffect(map[string]any{"to": v}), ctx)
		if err != nil {
			continue
		}
		text, html, js := badged(t, c)
		if text || html || js {
			fooled++
			if fooled <= 2 {
				t.Errorf("%q earns a TRUSTED badge:\n%s", v, c.Text())
			}
		}
	}
	assert.Zero(t, fooled, "of %d spellings", len(vals))
}
