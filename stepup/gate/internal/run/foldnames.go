package run

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
)

// Member names that differ only in letter case are two members to canon,
// to the policy's schema and to the card, but one to the decoders most Go
// executors use. encoding/json matches a member to a struct field
// ignoring case under Unicode simple case folding (so "ſ" is "s" and the
// Kelvin sign "K" is "k"), and the last match wins; sonic, which Eino's
// tools decode with, compares strings.ToLower of the names, which also
// takes "İ" (U+0130) for "i". A call {"payeeId":"acme","payeeid":"mallory"}
// shows the approver acme and pays mallory. So Propose refuses an object,
// at any depth, with two names either decoder takes for one, whatever the
// tool's schema says: no executor then has to know.

// foldedNames returns why the arguments v are refused for holding an
// object with two member names that differ only in case, or "". It
// visits each value once and compares each object's names once (pair by
// pair for a few, through a set of their foldings for more), so it takes
// time linear in the arguments.
func foldedNames(v canon.Value) string {
	var path []token // to the value visited
	var visit func(canon.Value) bool
	visit = func(v canon.Value) bool {
		switch v.Kind() {
		case canon.KindObject:
			if caseFolded(v) {
				return false
			}
			for k, m := range v.Members() {
				if m.Kind() != canon.KindObject && m.Kind() != canon.KindArray {
					continue
				}
				path = append(path, token{key: k})
				if !visit(m) {
					return false
				}
				path = path[:len(path)-1]
			}
		case canon.KindArray:
			for i, e := range v.Elems() {
				if e.Kind() != canon.KindObject && e.Kind() != canon.KindArray {
					continue
				}
				path = append(path, token{index: i, elem: true})
				if !visit(e) {
					return false
				}
				path = path[:len(path)-1]
			}
		}
		return true
	}
	// The recursion is as deep as the arguments nest, which canon bounds
	// (canon.DefaultMaxDepth).
	if visit(v) {
		return ""
	}
	where := "the arguments object itself"
	if len(path) > 0 {
		where = "the object at JSON pointer " + strconv.Quote(shorten(pointer(path), maxPointer))
	}
	return "arguments hold member names that differ only in letter case, which a decoder that ignores case reads as one member (" +
		where + ")"
}

// token is one reference token of a JSON pointer into the arguments: a
// member's name or an element's index.
type token struct {
	key   string
	index int
	elem  bool
}

// pointer is path as a JSON pointer (RFC 6901).
func pointer(path []token) string {
	var b strings.Builder
	for _, t := range path {
		b.WriteByte('/')
		if t.elem {
			b.WriteString(strconv.Itoa(t.index))
		} else {
			b.WriteString(escapeToken(t.key))
		}
	}
	return b.String()
}

// maxPointer bounds the bytes of a refusal's JSON pointer: its reason is
// kept and shown on one line, and the names in it are the model's.
const maxPointer = 200

// caseFolded reports whether two member names of object v are equal
// under encoding/json's folding or under strings.ToLower (sonic's).
// Names are never equal as written: canon refuses duplicates.
func caseFolded(v canon.Value) bool {
	if v.Len() < 2 {
		return false
	}
	var small [smallObject]string
	names, ascii := small[:0], true
	if n := v.Len(); n > smallObject {
		names = make([]string, 0, n)
	}
	for k := range v.Members() {
		names = append(names, k)
		ascii = ascii && isASCII(k)
	}
	if len(names) <= smallObject {
		return pairFolded(names, ascii)
	}
	folded := make(map[string]struct{}, len(names))
	var lowered map[string]struct{}
	if !ascii {
		// For ASCII names the two foldings make the same classes.
		lowered = make(map[string]struct{}, len(names))
	}
	var buf []byte
	for _, k := range names {
		buf = appendFold(buf[:0], k)
		if _, dup := folded[string(buf)]; dup {
			return true
		}
		folded[string(buf)] = struct{}{}
		if lowered != nil {
			l := strings.ToLower(k)
			if _, dup := lowered[l]; dup {
				return true
			}
			lowered[l] = struct{}{}
		}
	}
	return false
}

// smallObject is the most names compared pair by pair, which costs less
// than a set: at most 28 pairs.
const smallObject = 8

// pairFolded is caseFolded for at most smallObject names.
func pairFolded(names []string, ascii bool) bool {
	var lowered [smallObject]string
	for j, k := range names {
		if !ascii {
			lowered[j] = strings.ToLower(k)
		}
		for i := range j {
			if strings.EqualFold(names[i], k) || (!ascii && lowered[i] == lowered[j]) {
				return true
			}
		}
	}
	return false
}

// appendFold appends name folded as encoding/json folds member names
// (its foldName): ASCII letters to upper case, every other rune to the
// smallest rune of its simple case folding orbit. Two names fold alike
// exactly when strings.EqualFold reports them equal.
func appendFold(out []byte, name string) []byte {
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune returns the smallest rune of r's simple case folding orbit.
func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// escapeToken escapes a member name as a JSON pointer token (RFC 6901).
func escapeToken(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
