package card

import (
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/card/internal/chunked"
)

// TestHTMLTextIsHTMLEscapeString: on generated strings of the bytes
// html/template replaces and others, the view's escaper writes exactly
// what html/template's does.
func TestHTMLTextIsHTMLEscapeString(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "b", " ", "\x00", `"`, "'", "&", "<", ">", "é", "\u4e00", `\`, "\xff"}
	for range 2000 {
		var s strings.Builder
		for range r.IntN(30) {
			s.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		var b chunked.Builder
		htmlText(&b, s.String())
		assert.Equal(t, template.HTMLEscapeString(s.String()), b.String(), "%q", s.String())
	}
	for _, s := range []string{"", "plain", `<a href="x">&'</a>`, "a\x00b", "é<ü>", "&&", "'\"", "\\u{200B}"} {
		var b chunked.Builder
		htmlText(&b, s)
		assert.Equal(t, template.HTMLEscapeString(s), b.String(), "%q", s)
	}
}
