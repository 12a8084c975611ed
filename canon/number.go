package canon

import (
	"bytes"
	"strconv"

	"github.com/gowebpki/jcs"
)

// number reads a number, checks that its canonical form denotes the same
// decimal value as its text, and writes the canonical form.
func (p *parser) number() error {
	start := p.pos
	text, ok := scanNumber(p.in[p.pos:])
	if !ok {
		return p.fail(ErrSyntax)
	}
	p.pos += len(text)
	out, ok := appendNumber(p.out, text)
	if !ok {
		return &Error{Offset: start, Err: ErrNumber}
	}
	p.out = out
	return nil
}

// appendNumber appends the canonical form of the JSON number text, or
// returns false when that form denotes another decimal value.
func appendNumber(out, text []byte) ([]byte, bool) {
	// Fast path: an integer of at most 15 digits is exact in a float64 and
	// its ES6 form is its own text (only "-0" changes spelling).
	if len(text) <= 15 && isPlainInt(text) && string(text) != "-0" {
		return append(out, text...), true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return out, false
	}
	canonical, err := jcs.NumberToJSON(f)
	if err != nil {
		return out, false
	}
	var cbuf [32]byte // ES6 number forms are at most 25 bytes
	if !sameDecimal(text, append(cbuf[:0], canonical...)) {
		return out, false
	}
	return append(out, canonical...), true
}

func isPlainInt(b []byte) bool {
	for i, c := range b {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}

// scanNumber returns the longest prefix of b that is a JSON number
// (RFC 8259 section 6), or false if b does not start with one.
func scanNumber(b []byte) ([]byte, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	return b[:i], true
}

// decimal is a number's exact value as sign, significant digits without
// leading or trailing zeros, and the power of ten of the last digit.
type decimal struct {
	neg    bool
	digits []byte
	exp    int
}

// sameDecimal reports whether two JSON number texts denote the same decimal
// value. Both are well formed; exponents too large to matter compare unequal.
func sameDecimal(a, b []byte) bool {
	var bufA, bufB [64]byte // scratch for the digits; longer numbers spill to the heap
	da, okA := parseDecimal(a, bufA[:0])
	db, okB := parseDecimal(b, bufB[:0])
	if !okA || !okB {
		return false
	}
	return da.neg == db.neg && da.exp == db.exp && bytes.Equal(da.digits, db.digits)
}

// parseDecimal parses b, appending its digits to buf.
func parseDecimal(b, buf []byte) (decimal, bool) {
	var d decimal
	if len(b) > 0 && b[0] == '-' {
		d.neg = true
		b = b[1:]
	}
	mant, expText := b, []byte(nil)
	if i := bytes.IndexAny(b, "eE"); i >= 0 {
		mant, expText = b[:i], b[i+1:]
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := append(append(buf, intPart...), frac...)
	exp := -len(frac)
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 { // zero, whatever its sign or exponent
		return decimal{}, true
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(expText) > 0 {
		e, err := strconv.Atoi(string(expText))
		if err != nil || e > 1e6 || e < -1e6 {
			return decimal{}, false
		}
		exp += e
	}
	d.digits, d.exp = digits, exp
	return d, true
}

// CompareDecimal compares two JSON number texts as exact decimal values:
// -1 when a < b, 0 when they denote the same value (so "1.0", "1" and
// "1e0" are equal, and so are "0" and "-0"), +1 when a > b. Neither is
// rounded through float64. It fails with [ErrNotNumber] when either text
// is not a JSON number or has an exponent beyond ±1,000,000.
//
// A policy limit compares with it: CompareDecimal(amount, "500") > 0
// means the amount is over 500, however either is spelt.
func CompareDecimal(a, b string) (int, error) {
	var bufA, bufB [64]byte // digits; longer numbers spill to the heap
	da, okA := parseNumberText(a, bufA[:0])
	db, okB := parseNumberText(b, bufB[:0])
	if !okA || !okB {
		return 0, ErrNotNumber
	}
	return compareDecimal(da, db), nil
}

func parseNumberText(s string, buf []byte) (decimal, bool) {
	b := []byte(s)
	if text, ok := scanNumber(b); !ok || len(text) != len(b) {
		return decimal{}, false
	}
	d, ok := parseDecimal(b, buf)
	if len(d.digits) == 0 {
		d.neg = false // -0 is zero
	}
	return d, ok
}

// compareDecimal orders two decimals by sign, then by the power of ten of
// their leading digit, then digit by digit.
func compareDecimal(a, b decimal) int {
	sign := func(d decimal) int {
		switch {
		case len(d.digits) == 0:
			return 0
		case d.neg:
			return -1
		}
		return 1
	}
	sa, sb := sign(a), sign(b)
	if sa != sb || sa == 0 {
		return cmpInt(sa, sb)
	}
	mag := cmpInt(a.exp+len(a.digits), b.exp+len(b.digits))
	if mag == 0 {
		mag = bytes.Compare(a.digits, b.digits) // no trailing zeros: shorter is smaller
	}
	return sa * mag
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
