// Package confusable answers which characters Unicode Technical Standard
// #39 lists as confusable with others, and computes skeletons (UTS #39
// section 4), from the complete confusables data of Unicode 13.0.0
// ([Version]).
//
// # The table
//
// The data is generated (see gen) into confusables.bin, embedded in the
// binary: a line of text naming the data and its Unicode version, then
// every entry as a code point delta, a length and the skeleton's bytes. It
// is decoded once, on the first lookup, into a sorted table whose
// skeletons are slices of the embedded bytes; after that, lookups are a
// binary search over it and allocate nothing.
package confusable

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

//go:generate go run ./gen -o confusables.bin

// Version is the Unicode version of the confusables data in the table.
const Version = "13.0.0"

// data is the generated table: see gen for its layout.
//
//go:embed confusables.bin
var data string

// maxEntries bounds the entry count a header may announce: every code
// point at most once.
const maxEntries = utf8.MaxRune + 1

type entry struct {
	r    rune
	skel string
}

// The decoded table: [entries] fills it on its first call. The embedded
// data is checked by the package's tests; were it damaged, the table would
// hold the entries before the damage.
var (
	decodeOnce sync.Once
	table      []entry
)

// entries returns the decoded table, decoding it on the first call.
func entries() []entry {
	decodeOnce.Do(load)
	return table
}

// load decodes the embedded table.
func load() { table, _ = decode(data) }

// decode reads a table in gen's layout. Skeletons are substrings of src,
// so the table costs one allocation. It returns the entries it could read
// and an error for anything that is not a well-formed table of Version:
// another version, a count that does not match, code points out of order
// or out of range, skeletons that are empty, truncated or not UTF-8,
// trailing bytes.
func decode(src string) ([]entry, error) {
	header, body, ok := strings.Cut(src, "\n")
	if !ok {
		return nil, errors.New("confusable: no header")
	}
	rest, ok := strings.CutPrefix(header, "UTS #39 confusables, Unicode "+Version+", ")
	if !ok {
		return nil, fmt.Errorf("confusable: header %.80q is not for Unicode %s", header, Version)
	}
	count, ok := strings.CutSuffix(rest, " entries")
	if !ok {
		return nil, fmt.Errorf("confusable: header %.80q has no entry count", header)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 || n > maxEntries || n > len(body)/3 {
		return nil, fmt.Errorf("confusable: bad entry count %.20q", count)
	}
	out := make([]entry, 0, n)
	prev := int64(-1)
	for off := 0; off < len(body); {
		delta, k := uvarint(body[off:])
		if k <= 0 || delta == 0 || delta > utf8.MaxRune+1 {
			return out, fmt.Errorf("confusable: bad code point delta at byte %d", off)
		}
		off += k
		r := prev + int64(delta)
		if r > utf8.MaxRune {
			return out, fmt.Errorf("confusable: code point beyond U+10FFFF at byte %d", off)
		}
		size, k := uvarint(body[off:])
		if k <= 0 || size == 0 || size > uint64(len(body)-off-k) {
			return out, fmt.Errorf("confusable: bad skeleton length at byte %d", off)
		}
		off += k
		skel := body[off : off+int(size)]
		if !utf8.ValidString(skel) {
			return out, fmt.Errorf("confusable: skeleton of %U is not UTF-8", r)
		}
		off += int(size)
		if len(out) == n {
			return out, fmt.Errorf("confusable: more than %d entries", n)
		}
		out = append(out, entry{rune(r), skel})
		prev = r
	}
	if len(out) != n {
		return out, fmt.Errorf("confusable: %d entries, header says %d", len(out), n)
	}
	return out, nil
}

// uvarint is [binary.Uvarint] on a string, without copying it.
func uvarint(s string) (uint64, int) {
	var buf [binary.MaxVarintLen64]byte
	return binary.Uvarint(buf[:copy(buf[:], s)])
}

// Lookup returns the skeleton of r, the string UTS #39 maps it to, when r
// is confusable with something other than itself; ok is false otherwise.
// Only code points in canonical decomposed form have entries that matter:
// a skeleton starts by decomposing.
func Lookup(r rune) (skel string, ok bool) {
	es := entries()
	if r < 0x80 {
		// The few ASCII entries come first.
		for i := 0; i < len(es) && es[i].r < 0x80; i++ {
			if es[i].r == r {
				return es[i].skel, true
			}
		}
		return "", false
	}
	i := sort.Search(len(es), func(i int) bool { return es[i].r >= r })
	if i < len(es) && es[i].r == r {
		return es[i].skel, true
	}
	return "", false
}

// Listed reports whether r has an entry: whether it can be mistaken for a
// different character or sequence.
func Listed(r rune) bool {
	_, ok := Lookup(r)
	return ok
}

// Skeleton returns the skeleton of s: decompose, map every character to its
// prototype, decompose again. Two strings are confusable when their
// skeletons are equal.
func Skeleton(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if sk, ok := Lookup(r); ok {
			b.WriteString(sk)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// Len is the number of entries in the table.
func Len() int { return len(entries()) }

// Entry returns the i-th entry of the table, in code point order, for
// tests that walk every confusable pair.
func Entry(i int) (rune, string) {
	e := entries()[i]
	return e.r, e.skel
}
