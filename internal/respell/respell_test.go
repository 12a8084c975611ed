package respell_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/internal/respell"
)

func TestPathsHoldEachSpellingOnce(t *testing.T) {
	got := respell.Paths("/inbox/queue", "/inbox/queue")
	assert.Contains(t, got, "//inbox/queue")
	assert.Contains(t, got, "/inbox//queue")
	assert.Contains(t, got, "/inbox/./queue")
	assert.Contains(t, got, "/inbox/x/../queue")
	assert.Contains(t, got, "/inbox/queue/")
	seen := map[string]bool{}
	for _, p := range got {
		assert.False(t, seen[p], "%s twice", p)
		seen[p] = true
	}
}

func ExamplePaths() {
	fmt.Println(respell.Paths("/a"))
	// Output: [/a //a /a/ /./a /x/../a]
}
