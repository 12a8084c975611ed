package canon

import (
	"bytes"
	"errors"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Kind is the JSON type of a [Value].
type Kind uint8

// The kinds of a [Value]. The zero Value has KindInvalid.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String returns the kind's JSON name, e.g. "number".
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "invalid"
}

// Value is one JSON value read from canonical JSON: objects keep their
// members in canonical (RFC 8785) order, numbers keep their canonical text,
// so two Values are equal exactly when their canonical texts are, and
// numbers compare as exact decimals ([Value.Cmp], [CompareDecimal]), never
// through float64.
//
// A Value is immutable and cheap to copy: it is a position in a tree that
// [ParseValue] builds in one pass with three allocations, whatever the
// number of values. Members, elements and the values below a Value share
// that tree. The zero Value has [KindInvalid].
type Value struct {
	t *tree
	i int32
}

// tree is a parsed document: its canonical text and its values in document
// order, each node followed by its descendants.
type tree struct {
	src   string // the canonical text
	esc   string // decoded strings whose canonical text has escapes
	nodes []node

	// room, when set, is the buffer src was frozen from, whose bytes
	// past src are unused: src is an object's text after the start of
	// an effect (`{"args":`), so that [SealArgs] can write the rest of
	// the effect there, once (claimed), instead of copying the object.
	room    []byte
	claimed atomic.Bool
}

// span is a decoded string inside src, or inside esc when flagged.
type span struct{ off, len int32 }

// node is one value: its canonical text is src[start:stop], its
// descendants are the nodes up to end.
type node struct {
	kind        Kind
	flags       uint8
	start, stop int32
	end         int32 // index past the last descendant
	n           int32 // number of members or elements
	key         span  // the member's key, when the parent is an object
	text        span  // a string's decoded text
}

const (
	flagKeyEsc  = 1 << iota // key is in esc
	flagTextEsc             // text is in esc
	flagMember              // the node is an object member
)

// decoded records the decoded bytes of a string whose canonical text
// starts at out[at]. Escaping only lengthens text, so when the canonical
// text is two quotes longer than dec, it is dec; otherwise dec is kept in
// the arena (esc true).
func (p *parser) decoded(dec []byte, at int) (s span, esc bool) {
	if len(p.out)-at-2 == len(dec) {
		return span{off: int32(at + 1), len: int32(len(dec))}, false
	}
	off := len(p.arena)
	p.arena = append(p.arena, dec...)
	return span{off: int32(off), len: int32(len(dec))}, true
}

// closeNode completes the node at idx once its value is written.
func (p *parser) closeNode(idx int) {
	nd := &p.nodes[idx]
	nd.stop, nd.end = int32(len(p.out)), int32(len(p.nodes))
	switch c := p.out[nd.start]; c {
	case '{', '[':
		nd.kind = KindArray
		if c == '{' {
			nd.kind = KindObject
		}
		for c := idx + 1; c < len(p.nodes); c = int(p.nodes[c].end) {
			nd.n++
		}
	case '"':
		nd.kind = KindString
	case 't', 'f':
		nd.kind = KindBool
	case 'n':
		nd.kind = KindNull
	default:
		nd.kind = KindNumber
	}
}

// ParseValue parses canonical JSON, as [Canonicalize] returns it, under
// the default limits. See [Limits.ParseValue].
func ParseValue(canonical []byte) (Value, error) { return Limits{}.ParseValue(canonical) }

// ParseValue parses canonical JSON into a [Value], in one pass and in time
// and memory linear in its size (about 36 bytes per value on top of the
// text). It refuses what [Limits.Canonicalize] refuses, and input that is
// valid JSON but not in canonical form with [ErrNotCanonical]: a Value
// stands for exactly one canonical text.
func (l Limits) ParseValue(canonical []byte) (Value, error) {
	t, out, err := l.build(canonical, "")
	if err != nil {
		return Value{}, err
	}
	if !bytes.Equal(out, canonical) {
		return Value{}, &Error{Offset: firstDiff(out, canonical), Err: ErrNotCanonical}
	}
	t.src = frozen(out)
	return Value{t: t}, nil
}

// Parse canonicalizes raw and parses the result into a [Value], in one
// pass, in time and memory linear in its size. The Value's
// [Value.Canonical] is what [Canonicalize] returns for raw; it refuses
// what Canonicalize refuses. A gate parses a call's arguments once with
// it and hands the Value on, to the policy and to [SealArgs].
func Parse(raw []byte) (Value, error) { return Limits{}.Parse(raw) }

// Parse is [Parse] within l.
//
// An object is parsed after the start of an effect, with room for the
// rest of it, so that sealing it as an effect's arguments writes the
// effect around it rather than copying it (see [SealArgs]).
func (l Limits) Parse(raw []byte) (Value, error) {
	prefix := ""
	if b := bytes.TrimLeft(raw, " \t\r\n"); len(b) > 0 && b[0] == '{' {
		prefix = effectStart
	}
	t, out, err := l.build(raw, prefix)
	if err != nil {
		return Value{}, err
	}
	t.src = frozen(out)
	if prefix != "" {
		t.room = out
	}
	return Value{t: t}, nil
}

// build runs the canonicalizing parser over raw, writing prefix and then
// the canonical text to the buffer it returns, and recording nodes, in
// canonical order, whose offsets point into that buffer. The caller may
// append to the buffer; the tree's src, its text, is left to the caller.
func (l Limits) build(raw []byte, prefix string) (*tree, []byte, error) {
	maxBytes, maxDepth := l.MaxBytes, l.MaxDepth
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	maxBytes = min(maxBytes, math.MaxInt32/8) // offsets are int32; canonical text may grow
	if len(raw) > maxBytes {
		return nil, nil, &Error{Offset: maxBytes, Err: ErrTooLarge}
	}
	if !utf8.Valid(raw) {
		return nil, nil, &Error{Offset: invalidUTF8At(raw), Err: ErrInvalidUTF8}
	}
	// After arguments parsed with an effect's start there is room for
	// the rest of a typical effect (see [SealArgs]).
	room := 256
	if prefix != "" {
		room = 512
	}
	out := make([]byte, 0, len(prefix)+len(raw)+room)
	// The member stack starts with room for a small object's members,
	// where growing it from nothing would take three allocations.
	p := parser{in: raw, maxDepth: maxDepth, out: append(out, prefix...), build: true,
		nodes: make([]node, 0, estimateValues(raw)), members: make([]member, 0, 8)}
	p.skipSpace()
	if err := p.value(0); err != nil {
		return nil, nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, nil, &Error{Offset: p.pos, Err: ErrTrailingData}
	}
	if len(p.out) > math.MaxInt32/2 {
		return nil, nil, &Error{Offset: 0, Err: ErrTooLarge}
	}
	return &tree{esc: string(p.arena), nodes: p.nodes}, p.out, nil
}

// estimateValues bounds the number of values from above, so that the node
// slice is allocated once: every value but the first follows a comma or
// opens a non-empty object or array.
func estimateValues(b []byte) int {
	return 1 + bytes.Count(b, []byte{','}) + bytes.Count(b, []byte{'{'}) + bytes.Count(b, []byte{'['})
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (v Value) node() *node { return &v.t.nodes[v.i] }

// Kind returns v's JSON type, [KindInvalid] for the zero Value.
func (v Value) Kind() Kind {
	if v.t == nil {
		return KindInvalid
	}
	return v.node().kind
}

// Canonical returns v's canonical JSON text.
func (v Value) Canonical() string {
	if v.t == nil {
		return ""
	}
	n := v.node()
	return v.t.src[n.start:n.stop]
}

// MarshalJSON returns v's canonical JSON text.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.t == nil {
		return nil, errors.New("canon: marshal of the zero Value")
	}
	return []byte(v.Canonical()), nil
}

// String returns a string's decoded text, and for any other kind its
// canonical JSON text.
func (v Value) String() string {
	if v.Kind() != KindString {
		return v.Canonical()
	}
	n := v.node()
	return v.text(n.text, n.flags&flagTextEsc != 0)
}

func (v Value) text(s span, esc bool) string {
	if esc {
		return v.t.esc[s.off : s.off+s.len]
	}
	return v.t.src[s.off : s.off+s.len]
}

// Number returns a number's canonical text, e.g. "19.99" or "1e+21", and
// "" for any other kind.
func (v Value) Number() string {
	if v.Kind() != KindNumber {
		return ""
	}
	return v.Canonical()
}

// Bool reports whether v is true.
func (v Value) Bool() bool { return v.Kind() == KindBool && v.t.src[v.node().start] == 't' }

// Key returns the member key of v, and false when v is not a member of an
// object.
func (v Value) Key() (string, bool) {
	if v.t == nil || v.node().flags&flagMember == 0 {
		return "", false
	}
	n := v.node()
	return v.text(n.key, n.flags&flagKeyEsc != 0), true
}

// Len returns the number of members of an object or elements of an array,
// and 0 for any other kind.
func (v Value) Len() int {
	if v.t == nil {
		return 0
	}
	return int(v.node().n)
}

// children yields the members or elements of v in order.
func (v Value) children() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		if v.t == nil {
			return
		}
		end := v.node().end
		for c := v.i + 1; c < end; c = v.t.nodes[c].end {
			if !yield(Value{t: v.t, i: c}) {
				return
			}
		}
	}
}

// Members yields the key and value of each member of an object, in
// canonical order; nothing for any other kind.
func (v Value) Members() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		if v.Kind() != KindObject {
			return
		}
		for c := range v.children() {
			k, _ := c.Key()
			if !yield(k, c) {
				return
			}
		}
	}
}

// Elems yields the index and value of each element of an array; nothing
// for any other kind.
func (v Value) Elems() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		if v.Kind() != KindArray {
			return
		}
		i := 0
		for c := range v.children() {
			if !yield(i, c) {
				return
			}
			i++
		}
	}
}

// Get returns the member of an object with the key, in time linear in the
// number of members.
func (v Value) Get(key string) (Value, bool) {
	for k, c := range v.Members() {
		if k == key {
			return c, true
		}
	}
	return Value{}, false
}

// Index returns the element i of an array.
func (v Value) Index(i int) (Value, bool) {
	for j, c := range v.Elems() {
		if j == i {
			return c, true
		}
	}
	return Value{}, false
}

// At returns the value a JSON pointer (RFC 6901) names below v, e.g.
// "/items/0/amount"; "" names v itself. An array index is decimal digits
// without leading zeros.
func (v Value) At(pointer string) (Value, bool) {
	if pointer == "" {
		return v, v.t != nil
	}
	if pointer[0] != '/' {
		return Value{}, false
	}
	cur := v
	for tok := range strings.SplitSeq(pointer[1:], "/") {
		tok, ok := unescapeToken(tok)
		if !ok {
			return Value{}, false
		}
		switch cur.Kind() {
		case KindObject:
			cur, ok = cur.Get(tok)
		case KindArray:
			var i int
			i, ok = arrayIndex(tok)
			if ok {
				cur, ok = cur.Index(i)
			}
		default:
			ok = false
		}
		if !ok {
			return Value{}, false
		}
	}
	return cur, true
}

func unescapeToken(s string) (string, bool) {
	if !strings.Contains(s, "~") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1') {
			return "", false
		}
		b.WriteByte("~/"[s[i+1]-'0'])
		i++
	}
	return b.String(), true
}

func arrayIndex(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Walk calls fn for v and every value below it, in document order (a
// member or element after its parent, before its next sibling). When fn
// returns false, the values below the one it was given are skipped. It
// allocates nothing and does not recurse.
func (v Value) Walk(fn func(Value) bool) {
	if v.t == nil {
		return
	}
	end := v.node().end
	for i := v.i; i < end; {
		if fn(Value{t: v.t, i: i}) {
			i++
		} else {
			i = v.t.nodes[i].end
		}
	}
}

// Equal reports whether v and o are the same JSON value. Both are
// canonical, so that is whether their canonical texts are equal.
func (v Value) Equal(o Value) bool {
	return v.Kind() == o.Kind() && v.Canonical() == o.Canonical()
}

// Cmp compares two numbers as exact decimals: -1 when v < o, 0 when equal,
// +1 when v > o. It fails with [ErrNotNumber] when either is not a number.
func (v Value) Cmp(o Value) (int, error) {
	if v.Kind() != KindNumber || o.Kind() != KindNumber {
		return 0, ErrNotNumber
	}
	return CompareDecimal(v.Number(), o.Number())
}
