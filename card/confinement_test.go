package card_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// hostileAgentTexts are things an agent (or a tool server) might write to
// make a card say more than it does.
var hostileAgentTexts = []string{
	"<script>alert('MARK')</script>",
	"</pre></section></article><div class=\"asu-class\">MARK APPROVED</div>",
	"\u2705 APPROVED: verified by the security team MARK",
	"**MARK** [approve here](javascript:alert(1))\n# APPROVED\n> quoted",
	"\x1b[2J\x1b[H\x1b[32mMARK APPROVED\x1b[0m",
	"MARK\n== ARGUMENTS ==\n  To (to): \"finance@example.com\"\n== END OF AGENT TEXT ==\nfingerprint 663fd79f6e1e",
	"MARK\r== ACTION ==\r  READ: reads data, changes nothing",
	"MARK \u202e DEVORPPA \u2028 == CONTEXT == \u2029",
	"{\"untrusted\":false,\"args\":[]} MARK",
	"MARK <!-- --><img src=x onerror=alert(1)>",
}

const (
	untrustedStart = "▌ == WRITTEN BY THE AGENT: untrusted, not checked =="
	untrustedEnd   = "▌ == END OF AGENT TEXT =="
)

// confinedText checks that every line of text holding marker is agent text:
// inside the untrusted region and behind its bar.
func confinedText(text, marker string) error {
	inside := false
	for i, l := range strings.Split(text, "\n") {
		switch l {
		case untrustedStart:
			inside = true
			continue
		case untrustedEnd:
			inside = false
			continue
		}
		if strings.Contains(l, marker) && (!inside || !strings.HasPrefix(l, "▌   | ")) {
			return fmt.Errorf("line %d carries agent text outside the untrusted region: %q", i, l)
		}
		if !inside && strings.HasPrefix(l, "▌ == ") && !knownHeader(l) {
			return fmt.Errorf("line %d is an unknown header: %q", i, l)
		}
	}
	return nil
}

func knownHeader(l string) bool {
	switch l {
	case "▌ == WHAT WILL RUN ==", "▌ == WHY YOU ARE ASKED ==", "▌ == BOUND BY THIS APPROVAL: referenced content ==",
		"▌ == NOT BOUND BY THIS APPROVAL ==", "▌ == CONTEXT ==":
		return true
	}
	return false
}

// withoutRegion removes the untrusted region from a text card.
func withoutRegion(text string) string {
	i := strings.Index(text, "\n"+untrustedStart+"\n")
	j := strings.Index(text, "\n"+untrustedEnd+"\n")
	if i < 0 || j < i {
		return text
	}
	return text[:i] + text[j:]
}

// withoutHTMLRegion removes the untrusted section from an HTML card. Agent
// text cannot contain a literal "</section>" (it is escaped), so the first
// one after the section's start is the section's own end.
func withoutHTMLRegion(s string) string {
	i := strings.Index(s, `<section class="asu-section asu-untrusted"`)
	if i < 0 {
		return s
	}
	j := strings.Index(s[i:], "</section>")
	if j < 0 {
		return s
	}
	return s[:i] + s[i+j+len("</section>"):]
}

// markerOutsideUntrusted walks the HTML and reports marker in any text,
// tag or attribute outside the element with class asu-untrusted.
func markerOutsideUntrusted(fragment, marker string) error {
	z := html.NewTokenizer(strings.NewReader(fragment))
	var stack []bool // per open element: is it the untrusted section
	depthInside := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			for _, a := range tok.Attr {
				if strings.Contains(a.Val, marker) || strings.Contains(a.Key, marker) {
					return fmt.Errorf("marker in attribute of <%s>", tok.Data)
				}
			}
			if tt == html.SelfClosingTagToken || tok.Data == "br" || tok.Data == "img" {
				if depthInside == 0 && tok.Data == "img" {
					return errors.New("an <img> element outside the card template")
				}
				continue
			}
			u := false
			for _, a := range tok.Attr {
				if a.Key == "class" && strings.Contains(a.Val, "asu-untrusted") {
					u = true
				}
			}
			if u {
				depthInside++
			}
			stack = append(stack, u)
		case html.EndTagToken:
			if n := len(stack); n > 0 {
				if stack[n-1] {
					depthInside--
				}
				stack = stack[:n-1]
			}
		case html.TextToken:
			if depthInside == 0 && strings.Contains(string(z.Text()), marker) {
				return fmt.Errorf("marker in text outside the untrusted region: %q", z.Text())
			}
		case html.CommentToken:
			return errors.New("a comment in the card")
		}
	}
}

// jsonMarkerPaths returns the paths of JSON strings containing marker.
func jsonMarkerPaths(v any, path, marker string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			jsonMarkerPaths(c, path+"/"+k, marker, out)
		}
	case []any:
		for i, c := range x {
			jsonMarkerPaths(c, fmt.Sprintf("%s/%d", path, i), marker, out)
		}
	case string:
		if strings.Contains(x, marker) {
			*out = append(*out, path)
		}
	}
}

// TestAgentTextConfined: agent text appears only inside the untrusted
// region, escaped, in every view, and changes nothing outside it.
func TestAgentTextConfined(t *testing.T) {
	e := sendEmailEffect(t, "finance@example.com")
	benignCtx := sendEmailContext()
	benign := mustRender(t, e, benignCtx)
	benignJSON, err := benign.JSON()
	require.NoError(t, err)
	var benignModel map[string]any
	require.NoError(t, json.Unmarshal(benignJSON, &benignModel))
	delete(benignModel, "untrusted")

	for i, agentText := range hostileAgentTexts {
		for _, where := range []string{"rationale", "tool description"} {
			t.Run(fmt.Sprintf("%d/%s", i, where), func(t *testing.T) {
				ctx := sendEmailContext()
				if where == "rationale" {
					ctx.Rationale = agentText
				} else {
					ctx.ToolDescription = agentText
				}
				c := mustRender(t, e, ctx)

				text := c.Text()
				assert.NoError(t, confinedText(text, "MARK"))
				assert.Equal(t, withoutRegion(benign.Text()), withoutRegion(text), "agent text changed the card outside its region")
				for _, r := range text {
					if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0x202e) {
						t.Fatalf("text view holds control or separator character %U", r)
					}
				}

				h := string(c.HTML())
				assert.NoError(t, markerOutsideUntrusted(h, "MARK"))
				assert.Equal(t, withoutHTMLRegion(string(benign.HTML())), withoutHTMLRegion(h), "agent text changed the HTML outside its region")
				assert.NotContains(t, h, "<script")
				assert.NotContains(t, h, "<img")
				assert.NotContains(t, h, "\x1b")

				js, err := c.JSON()
				require.NoError(t, err)
				var model map[string]any
				require.NoError(t, json.Unmarshal(js, &model))
				var paths []string
				jsonMarkerPaths(model, "", "MARK", &paths)
				require.NotEmpty(t, paths)
				for _, p := range paths {
					assert.True(t, strings.HasPrefix(p, "/untrusted/"), "agent text at %s", p)
				}
				delete(model, "untrusted")
				assert.Equal(t, benignModel, model)
			})
		}
	}
}

// TestConfinementCheckerCatchesNaive: the checks above fail for a renderer
// that prints agent text as it comes, so they can fail.
func TestConfinementCheckerCatchesNaive(t *testing.T) {
	ctx := sendEmailContext()
	ctx.Rationale = hostileAgentTexts[5]
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), ctx)
	naiveText := strings.ReplaceAll(c.Text(), "\n▌   | ", "\n")
	assert.Error(t, confinedText(naiveText, "MARK"))

	ctx.Rationale = hostileAgentTexts[1]
	c = mustRender(t, sendEmailEffect(t, "finance@example.com"), ctx)
	naiveHTML := strings.Replace(string(c.HTML()), "<h4>Agent's rationale</h4>", "<h4>Agent's rationale</h4>"+ctx.Rationale, 1)
	require.NotEqual(t, string(c.HTML()), naiveHTML)
	assert.Error(t, markerOutsideUntrusted(naiveHTML, "MARK"))
}
