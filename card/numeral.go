package card

import (
	"strconv"
	"strings"
)

// numeral is a number counted up in decimal as text: the indices of a
// list's items, one after another, without a conversion for each.
type numeral struct {
	buf   [20]byte
	start int // the digits are buf[start:]
}

// newNumeral returns the numeral "0".
func newNumeral() numeral {
	n := numeral{start: len(numeral{}.buf) - 1}
	n.buf[n.start] = '0'
	return n
}

// digits returns the numeral's text, valid until it is next counted up.
func (n *numeral) digits() []byte { return n.buf[n.start:] }

// next counts the numeral up by one.
func (n *numeral) next() {
	for i := len(n.buf) - 1; i >= n.start; i-- {
		if n.buf[i] < '9' {
			n.buf[i]++
			return
		}
		n.buf[i] = '0'
	}
	n.start--
	n.buf[n.start] = '1'
}

// smallNumbers is how many numbers decimal and itemHeads have text for
// ready.
const smallNumbers = 1024

// decimals are "0" to "1023"; itemHeads is "[0][1]...[1023]", whose
// prefixes are the heads of the items of every list of up to 1,024
// items. Both are read only.
var decimals, itemHeads = func() (d [smallNumbers]string, heads string) {
	var b strings.Builder
	for i := range d {
		d[i] = strconv.Itoa(i)
		b.WriteString("[" + d[i] + "]")
	}
	return d, b.String()
}()

// decimal returns n in decimal, without an allocation when it is small.
func decimal(n int) string {
	if n >= 0 && n < smallNumbers {
		return decimals[n]
	}
	return strconv.Itoa(n)
}

// appendItemHeads returns the heads of the items of a list of n items,
// "[0][1]..." in one string: a prefix of itemHeads for a short list, or
// one string built in buf for a long one.
func appendItemHeads(buf []byte, n int) (string, []byte) {
	if n <= smallNumbers {
		// Items 0-9 take 3 bytes, 10-99 take 4, 100-999 take 5, 1000-1023 take 6.
		end := 0
		for width, from, to := 3, 0, 10; from < n; width, from, to = width+1, to, to*10 {
			end += width * (min(n, to) - from)
		}
		return itemHeads[:end], buf
	}
	buf = buf[:0]
	num := newNumeral()
	for range n {
		buf = append(buf, '[')
		buf = append(buf, num.digits()...)
		buf = append(buf, ']')
		num.next()
	}
	return string(buf), buf
}
