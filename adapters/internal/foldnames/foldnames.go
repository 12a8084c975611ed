// Package foldnames refuses arguments an executor would decode wrongly:
// an object with two member names that differ only in letter case. Go's
// encoding/json matches names to struct fields under Unicode simple case
// folding ("ſ" is "s", the Kelvin sign is "k") and sonic, Eino's
// decoder, under strings.ToLower ("İ" is "i"); either lets the last of
// the two win, where the card showed both. The gate refuses such calls
// at Propose; the adapters' executors check again, so that a tool they
// run never sees one whatever gate stored the call.
package foldnames

import (
	"errors"
	"strings"
	"unicode"

	"github.com/agentstepup/asu/canon"
)

// ErrFolded is the error of arguments that hold two member names that
// differ only in letter case.
var ErrFolded = errors.New("arguments hold member names that differ only in letter case")

// Check returns an error unless args is JSON in which no object has two
// member names equal under strings.EqualFold or strings.ToLower. It
// takes time linear in args: each name is folded once, into a set per
// object.
func Check(args []byte) error {
	v, err := canon.Parse(args)
	if err != nil {
		return err
	}
	var bad bool
	v.Walk(func(x canon.Value) bool {
		bad = bad || folded(x)
		return !bad
	})
	if bad {
		return ErrFolded
	}
	return nil
}

// folded reports whether object v has two names a decoder takes for
// one; canon has refused names equal as written.
func folded(v canon.Value) bool {
	if v.Kind() != canon.KindObject || v.Len() < 2 {
		return false
	}
	seen := make(map[string]struct{}, 2*v.Len())
	for k := range v.Members() {
		// Two keys a name: its simple case folding (what
		// encoding/json compares) and its lower case (sonic's).
		for _, key := range [2]string{"f" + fold(k), "l" + strings.ToLower(k)} {
			if _, dup := seen[key]; dup {
				return true
			}
			seen[key] = struct{}{}
		}
	}
	return false
}

// fold is name with every rune replaced by the smallest rune of its
// simple case folding orbit, as encoding/json folds member names: two
// names fold alike exactly when strings.EqualFold reports them equal.
func fold(name string) string {
	return strings.Map(func(r rune) rune {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				return next
			}
			r = next
		}
	}, name)
}
