package host

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/bidi"

	"github.com/agentstepup/asu/card/internal/charclass"
)

// strictIDNA is the IDNA2008 (UTS #46, non-transitional) lookup profile with
// every check on: a name it refuses is never shown as a domain.
var strictIDNA = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckHyphens(true),
	idna.CheckJoiners(true),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

//go:generate go run ./gen -o idna_table.go

// ComputeStable reports whether strict IDNA (strictIDNA) keeps the
// non-ASCII code point r as itself wherever it stands in a label of a
// left-to-right name: it maps to itself, is valid, is a left-to-right
// character that no context rule, bidi rule or normalization touches (not
// a mark, nothing NFC combines, in NFC and NFKC on its own), and strict
// IDNA converts it, alone and beside letters, digits and hyphens, to the
// Punycode of the label and back. The generator writes the table of such
// code points that stableRune reads; a test checks it against this
// function for every code point.
func ComputeStable(r rune) bool {
	if r < 0x80 || r > utf8.MaxRune || r >= 0xd800 && r <= 0xdfff {
		return false
	}
	const unfit = charclass.Control | charclass.Bidi | charclass.Invisible | charclass.Space | charclass.Private |
		charclass.Mark | charclass.NotNFC | charclass.Compat | charclass.Combines | charclass.RTL
	if charclass.Compute(r).Props&unfit != 0 {
		return false
	}
	if p, _ := bidi.LookupRune(r); p.Class() != bidi.L {
		return false
	}
	c := string(r)
	for _, label := range []string{c, "a" + c, c + "a", "a" + c + "z", "0" + c + "-" + c + c, c + "-0"} {
		name := label + ".com"
		ascii, err := strictIDNA.ToASCII(name)
		if err != nil {
			return false
		}
		if enc, ok := punycode(nil, label); !ok || ascii != string(enc)+".com" {
			return false
		}
		if uni, err := strictIDNA.ToUnicode(ascii); err != nil || uni != name {
			return false
		}
	}
	return true
}

// stableRune reports ComputeStable(r) from the generated table.
func stableRune(r rune) bool {
	lo, hi := 0, len(stableRanges)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < stableRanges[m][0]:
			hi = m
		case r > stableRanges[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// fastIDNA converts a host name whose labels are ASCII letters, digits and
// hyphens and stable code points (see ComputeStable) as strict IDNA does,
// without its tables: each ASCII label lower-cased, each other label
// lower-cased and Punycode-encoded. ok is false for any other name, and
// for one that breaks a rule strict IDNA checks (empty or long labels,
// hyphens at either end or in the third and fourth places, a name longer
// than 253 characters); strict IDNA then decides. uni is the Unicode form
// strict IDNA gives back for ascii.
func fastIDNA(host string) (ascii, uni string, ok bool) {
	if host == "" || len(host) > 253 {
		return "", "", false
	}
	var outBuf, lowerBuf [256 + 64]byte
	out, lower := outBuf[:0], lowerBuf[:0]
	for rest := host; ; {
		label, more, _ := strings.Cut(rest, ".")
		n := len(lower)
		if label == "" {
			return "", "", false
		}
		if lower, ok = appendLowerLabel(lower, label); !ok {
			return "", "", false
		}
		l := lower[n:]
		if l[0] == '-' || l[len(l)-1] == '-' || len(l) > 4 && l[2] == '-' && l[3] == '-' {
			return "", "", false
		}
		start := len(out)
		if isASCII(l) {
			out = append(out, l...)
		} else if out, ok = punycode(out, string(l)); !ok {
			return "", "", false
		}
		if len(out)-start > 63 {
			return "", "", false
		}
		if more == "" && !strings.Contains(rest, ".") {
			break
		}
		if more == "" {
			return "", "", false // a trailing dot: strict IDNA decides
		}
		out = append(out, '.')
		lower = append(lower, '.')
		rest = more
	}
	if len(out) > 253 {
		return "", "", false
	}
	uni = host
	if string(lower) != host {
		uni = string(lower)
	}
	return string(out), uni, true
}

// appendLowerLabel appends label to b with ASCII letters lower-cased, and
// reports whether every character is an ASCII letter, digit or hyphen or
// a stable code point.
func appendLowerLabel(b []byte, label string) ([]byte, bool) {
	for _, r := range label {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 0x80 && stableRune(r):
		default:
			return b, false
		}
		b = utf8.AppendRune(b, r)
	}
	return b, true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// punycode appends "xn--" and the RFC 3492 encoding of label to dst; ok is
// false when the label is too long to be one (more than 63 code points).
func punycode(dst []byte, label string) ([]byte, bool) {
	const (
		base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
	)
	total := utf8.RuneCountInString(label)
	if total > 63 {
		return dst, false
	}
	dst = append(dst, "xn--"...)
	basic := 0
	for i := 0; i < len(label); i++ {
		if label[i] < 0x80 {
			dst = append(dst, label[i])
			basic++
		}
	}
	if basic > 0 {
		dst = append(dst, '-')
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	n, delta, bias := 0x80, 0, 72
	for h := basic; h < total; {
		m := int(utf8.MaxRune) + 1
		for _, r := range label {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range label {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := base; ; k += base {
				t := min(max(k-bias, tmin), tmax)
				if q < t {
					break
				}
				dst = append(dst, digit(t+(q-t)%(base-t)))
				q = (q - t) / (base - t)
			}
			dst = append(dst, digit(q))
			bias = adapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return dst, true
}
