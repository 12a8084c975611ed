package card

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNumeralCountsInDecimal: counted up from zero, a numeral reads as
// strconv writes every number on the way, across every change of width.
func TestNumeralCountsInDecimal(t *testing.T) {
	n := newNumeral()
	for i := range 1_200_000 {
		require.Equal(t, strconv.Itoa(i), string(n.digits()))
		n.next()
	}
	for _, i := range []int{-1, 0, 9, 10, 1023, 1024, 99999} {
		assert.Equal(t, strconv.Itoa(i), decimal(i))
	}
}

// TestItemHeads: the heads of a list's items are "[0]" to "[n-1]" for
// every length, short ones from the table and long ones built.
func TestItemHeads(t *testing.T) {
	var want strings.Builder
	var buf []byte
	for n := range 3000 {
		got, b := appendItemHeads(buf, n)
		buf = b
		require.Equal(t, want.String(), got, "n=%d", n)
		want.WriteString("[" + strconv.Itoa(n) + "]")
	}
}
