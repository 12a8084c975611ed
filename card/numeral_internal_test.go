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

// TestItemHeads: the heads of a list's items, taken as the text view
// takes them (a string at a time, each used up before the next), are
// "[0]" to "[n-1]" for every length, from the table and built.
func TestItemHeads(t *testing.T) {
	var want strings.Builder
	var buf []byte
	for n := range 2200 {
		var got strings.Builder
		for from := 0; from < n; {
			var heads string
			heads, buf = appendItemHeads(buf, from, n)
			require.NotEmpty(t, heads, "n=%d from=%d", n, from)
			got.WriteString(heads)
			from += strings.Count(heads, "]")
		}
		require.Equal(t, want.String(), got.String(), "n=%d", n)
		want.WriteString("[" + strconv.Itoa(n) + "]")
	}
	for _, n := range []int{0, 7, 1024, 99999, 100000, 123456789} {
		num := numeralAt(n)
		assert.Equal(t, strconv.Itoa(n), string(num.digits()))
	}
}

// TestDigitsBelow: digitsBelow(n) is the number of digits of 0 to n-1
// written out.
func TestDigitsBelow(t *testing.T) {
	d := 0
	for n := 0; n <= 120000; n++ {
		if got := digitsBelow(n); got != d {
			t.Fatalf("digitsBelow(%d) = %d, want %d", n, got, d)
		}
		d += len(strconv.Itoa(n))
	}
}

// TestItemHeadLen holds itemHeadLen to the length of "[i]", and to the
// heads appendItemHeads writes, across every change in digit count.
func TestItemHeadLen(t *testing.T) {
	var buf []byte
	heads := ""
	for i := 0; i <= 1_100_000; i++ {
		if got, want := itemHeadLen(i), len("["+strconv.Itoa(i)+"]"); got != want {
			t.Fatalf("itemHeadLen(%d) = %d, want %d", i, got, want)
		}
		if heads == "" {
			heads, buf = appendItemHeads(buf, i, 1_100_001)
		}
		if h := heads[:itemHeadLen(i)]; h != "["+strconv.Itoa(i)+"]" {
			t.Fatalf("head %d is %q", i, h)
		}
		heads = heads[itemHeadLen(i):]
	}
}
