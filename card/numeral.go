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

// numeralAt returns the numeral of n, which is not negative.
func numeralAt(n int) numeral {
	var num numeral
	num.start = len(num.buf) - len(strconv.AppendInt(num.buf[:0], int64(n), 10))
	strconv.AppendInt(num.buf[num.start:num.start], int64(n), 10)
	return num
}

// headsPerString is how many items' heads appendItemHeads writes at a
// time past the first smallNumbers.
const headsPerString = 1024

// appendItemHeads returns the heads of items from to at most to+1023 of
// a list of n items, "[from][from+1]..." in one string: a part of
// itemHeads for the first 1,024, and a string built in buf (returned for
// use again) for each 1,024 after.
func appendItemHeads(buf []byte, from, n int) (string, []byte) {
	if from < smallNumbers {
		// Items 0-9 take 3 bytes, 10-99 take 4, 100-999 take 5, 1000-1023 take 6.
		start, end := 0, 0
		for width, lo, hi := 3, 0, 10; lo < smallNumbers; width, lo, hi = width+1, hi, hi*10 {
			start += width * max(0, min(from, hi)-lo)
			end += width * max(0, min(n, hi, smallNumbers)-lo)
		}
		return itemHeads[start:end], buf
	}
	buf = buf[:0]
	num := numeralAt(from)
	for range min(n-from, headsPerString) {
		buf = append(buf, '[')
		buf = append(buf, num.digits()...)
		buf = append(buf, ']')
		num.next()
	}
	return string(buf), buf
}

// itemHeadLen is the length of item i's head, "[i]".
func itemHeadLen(i int) int {
	n := 3
	for x := 10; i >= x && x > 0; x *= 10 {
		n++
	}
	return n
}
