// Package confusable answers which characters Unicode Technical Standard
// #39 lists as confusable with others, and computes skeletons (UTS #39
// section 4), from the complete confusables data in table.go.
//
// The table is generated (see gen) and read only; lookups are a binary
// search over it and allocate nothing.
package confusable

import (
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"
)

//go:generate go run ./gen -o table.go

type entry struct {
	r    rune
	skel string
}

// Lookup returns the skeleton of r, the string UTS #39 maps it to, when r
// is confusable with something other than itself; ok is false otherwise.
// Only code points in canonical decomposed form have entries that matter:
// a skeleton starts by decomposing.
func Lookup(r rune) (skel string, ok bool) {
	if r < 0x80 {
		// The few ASCII entries come first.
		for i := 0; entries[i].r < 0x80; i++ {
			if entries[i].r == r {
				return entries[i].skel, true
			}
		}
		return "", false
	}
	i := sort.Search(len(entries), func(i int) bool { return entries[i].r >= r })
	if i < len(entries) && entries[i].r == r {
		return entries[i].skel, true
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
func Len() int { return len(entries) }

// Entry returns the i-th entry of the table, in code point order, for
// tests that walk every confusable pair.
func Entry(i int) (rune, string) { return entries[i].r, entries[i].skel }
