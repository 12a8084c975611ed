package attackkit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFindings finds links (and their query values) and tokens once each,
// in order, within bounds.
func TestFindings(t *testing.T) {
	links, tokens := findings([]string{
		`{"id":"tk-0123456789abcdef","reason":"Approve it here: http://127.0.0.1:9/magic?token=0a1b2c3d4e5f6a7b8c9d"}`,
		"again http://127.0.0.1:9/magic?token=0a1b2c3d4e5f6a7b8c9d and https://approve.example.com/approve/tk-1.",
	})
	assert.Equal(t, []string{"http://127.0.0.1:9/magic?token=0a1b2c3d4e5f6a7b8c9d", "https://approve.example.com/approve/tk-1."}, links)
	assert.Contains(t, tokens, "0a1b2c3d4e5f6a7b8c9d")
	assert.Contains(t, tokens, "tk-0123456789abcdef")
	many := strings.Repeat("http://x.example/a ", 10) + strings.Repeat("tokentokentoken", 1)
	var texts []string
	for i := range 200 {
		texts = append(texts, many+strings.Repeat("z", 12+i)+" http://h.example/"+strings.Repeat("p", i))
	}
	links, tokens = findings(texts)
	assert.LessOrEqual(t, len(links), maxLinks)
	assert.LessOrEqual(t, len(tokens), maxTokens)
}

// FuzzFindings: any text the agent was shown gives bounded findings, each
// a link of http or https, without panics.
func FuzzFindings(f *testing.F) {
	f.Add("see http://127.0.0.1:1/x?token=aaaaaaaaaaaaaaaa and tk-0123456789ab")
	f.Add("https://[::1]:80/%zz?%%=&&token=\x00")
	f.Fuzz(func(t *testing.T, s string) {
		links, tokens := findings([]string{s, s})
		if len(links) > maxLinks || len(tokens) > maxTokens {
			t.Fatalf("%d links, %d tokens", len(links), len(tokens))
		}
		for _, l := range links {
			if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
				t.Fatalf("link %q", l)
			}
		}
	})
}
