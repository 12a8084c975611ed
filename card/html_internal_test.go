package card

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSegments(t *testing.T) {
	got := segments(`a\u{200B}b\\c\"d\ne`)
	assert.Equal(t, []seg{{Text: "a"}, {Text: `\u{200B}`, Esc: true}, {Text: `b\\c\"d`}, {Text: `\n`, Esc: true}, {Text: "e"}}, got)
	assert.Equal(t, []seg{{Text: "plain"}}, segments("plain"))
	assert.Equal(t, []seg{{Text: "a"}, {Text: `\{3 spaces}`, Esc: true}, {Text: "b"}}, segments(`a\{3 spaces}b`))
}
