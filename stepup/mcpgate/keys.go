package mcpgate

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/policy"
)

// Go's JSON readers, and so any Go MCP server, match a member name to a
// struct field case-insensitively: encoding/json as bytes.EqualFold does
// (Unicode simple case folding: "addreſs", with a long s, and "ADDRESS"
// are both "address"; the Kelvin sign is a k), the last match winning;
// encoding/json/v2's case-insensitive matching also ignores '_' and '-'.
// The gate reads a member by its exact spelling. So two keys of one
// object that fold alike, or one key that folds to a limited argument's
// name, would let the gate check one value while the server reads
// another. Both are refused, by every catalog tool's first limit.

// foldKey appends the key under which a case-insensitive Go reader
// matches name: each rune replaced by the smallest rune of its simple
// fold orbit (as encoding/json's own folding does), '_' and '-' left out
// (as encoding/json/v2's does). Two names fold alike exactly when such a
// reader may take one for the other; strings.EqualFold implies it.
func foldKey(dst []byte, name string) []byte {
	for _, r := range name {
		switch {
		case r == '_' || r == '-':
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			dst = append(dst, byte(r))
		default:
			dst = utf8.AppendRune(dst, foldRune(r))
		}
	}
	return dst
}

// foldRune returns the smallest rune of r's simple fold orbit.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// plainKey reports whether name is only ASCII lower-case letters and
// digits: two such keys fold alike only when they are equal.
func plainKey(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Reasons the key check gives, as the model reads them. They never quote
// a key: keys are the agent's text.
const (
	reasonFoldedTwins = "arguments: two keys of one object differ only in letter case, '_' or '-', " +
		"and a server may read them as one; send one of them"
	reasonFoldedLimited = "arguments: a key is spelled like the limited argument %s but is not it; spell it %s"
)

// foldedTwins reports whether some object in v, at any depth, has two
// keys that fold alike.
func foldedTwins(v canon.Value) bool {
	var seen map[string]struct{}
	var buf []byte
	found := false
	v.Walk(func(o canon.Value) bool {
		if found {
			return false
		}
		if o.Kind() != canon.KindObject || o.Len() < 2 {
			return true
		}
		plain := true
		for k := range o.Members() {
			if !plainKey(k) {
				plain = false
				break
			}
		}
		if plain {
			return true // canon refuses exact duplicates
		}
		if seen == nil {
			seen = make(map[string]struct{}, o.Len())
		}
		clear(seen)
		for k := range o.Members() {
			buf = foldKey(buf[:0], k)
			if _, dup := seen[string(buf)]; dup {
				found = true
				return false
			}
			seen[string(buf)] = struct{}{}
		}
		return true
	})
	return found
}

// keyLimit is the limit every catalog tool checks first: no object of the
// arguments has two keys that fold alike, and no top-level key folds to
// the name of an argument the catalog names (a limit, a reference or a
// card hint) without being it. Such a key is refused rather than checked
// as the named argument: whichever value a server then reads, the gate
// has checked it, and what the card shows is what runs.
func keyLimit(named []string) policy.Limit {
	folded := make(map[string]string, len(named))
	for _, n := range named {
		folded[string(foldKey(nil, n))] = n
	}
	return func(args canon.Value) string {
		if foldedTwins(args) {
			return reasonFoldedTwins
		}
		var buf []byte
		for k := range args.Members() {
			buf = foldKey(buf[:0], k)
			if n, ok := folded[string(buf)]; ok && n != k {
				return fmt.Sprintf(reasonFoldedLimited, n, n)
			}
		}
		return ""
	}
}
