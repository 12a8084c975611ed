package canon

import (
	"bytes"
	"cmp"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Default limits of [Canonicalize].
const (
	DefaultMaxBytes = 1 << 20
	DefaultMaxDepth = 64
)

// Limits bounds what a canonicalizer accepts. Zero fields take the defaults.
type Limits struct {
	MaxBytes int // input size, checked before parsing
	MaxDepth int // nesting of arrays and objects
}

// Canonicalize returns the RFC 8785 (JCS) form of a JSON value under the
// default limits. See [Limits.Canonicalize].
func Canonicalize(raw []byte) ([]byte, error) { return Limits{}.Canonicalize(raw) }

// Canonicalize returns the RFC 8785 (JCS) form of the JSON value in raw.
//
// It refuses, with an [*Error] wrapping a sentinel, anything it cannot hash
// faithfully: input over the size limit ([ErrTooLarge]), nesting over the
// depth limit ([ErrTooDeep]), invalid UTF-8 ([ErrInvalidUTF8]), escaped lone
// surrogates ([ErrLoneSurrogate]), the same key twice in one object however
// it is escaped ([ErrDuplicateKey]), a number whose canonical form denotes a
// different decimal value than its text ([ErrNumber]: 9007199254740993,
// 0.30000000000000001, 1e400, 1e-400; but 19.99, 0.1 and 1.0 are exact
// enough because their canonical forms denote the same decimal), anything
// after the value ([ErrTrailingData]) and malformed JSON ([ErrSyntax]).
//
// Numbers are serialized by jcs.NumberToJSON, the ES6 algorithm RFC 8785
// names; the output is byte-identical to jcs.Transform on every input both
// accept (the tests and the fuzz target check this).
func (l Limits) Canonicalize(raw []byte) ([]byte, error) {
	maxBytes, maxDepth := l.MaxBytes, l.MaxDepth
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if len(raw) > maxBytes {
		return nil, &Error{Offset: maxBytes, Err: ErrTooLarge}
	}
	if !utf8.Valid(raw) {
		return nil, &Error{Offset: invalidUTF8At(raw), Err: ErrInvalidUTF8}
	}
	p := parser{in: raw, maxDepth: maxDepth, out: make([]byte, 0, len(raw))}
	p.skipSpace()
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, &Error{Offset: p.pos, Err: ErrTrailingData}
	}
	return p.out, nil
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// parser reads JSON and writes its canonical form to out in one pass. Object
// members are written in input order and then reordered in place, so the only
// allocations are out itself and scratch space reused across objects.
type parser struct {
	in       []byte
	pos      int
	maxDepth int
	out      []byte
	members  []member // stack shared by all open objects
	scratch  []byte   // reorder buffer
	keys     []byte   // decoded keys that contained escapes

	// With build set, the parser also records every value as a node of a
	// [Value] tree whose offsets point into out. Reordering an object's
	// members moves their nodes with their bytes (finishObject), so the
	// tree is in canonical order when the parse ends, in one pass.
	build     bool
	nodes     []node
	nodeSpare []node  // reorder buffer for nodes
	valueAt   []int32 // reorder buffer: the members' value nodes, in input order
	arena     []byte  // decoded strings whose canonical text has escapes
	key       span    // key of the member whose value comes next
	keyEsc    bool
	haveKey   bool
}

// member is one written object member: its decoded key and where its
// canonical "key":value text sits in out.
type member struct {
	key        []byte
	start, end int
}

func (p *parser) fail(sentinel error) error { return &Error{Offset: p.pos, Err: sentinel} }

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) error {
	if !p.build {
		return p.valueBody(depth)
	}
	idx := len(p.nodes)
	nd := node{start: int32(len(p.out))}
	if p.haveKey {
		nd.key, nd.flags, p.haveKey = p.key, flagMember, false
		if p.keyEsc {
			nd.flags |= flagKeyEsc
		}
	}
	p.nodes = append(p.nodes, nd)
	if err := p.valueBody(depth); err != nil {
		return err
	}
	p.closeNode(idx)
	return nil
}

func (p *parser) valueBody(depth int) error {
	if p.pos >= len(p.in) {
		return p.fail(ErrSyntax)
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		// A string value's decoded bytes are not needed past this point.
		mark, at := len(p.keys), len(p.out)
		dec, err := p.str()
		if err == nil && p.build {
			nd := &p.nodes[len(p.nodes)-1]
			var esc bool
			if nd.text, esc = p.decoded(dec, at); esc {
				nd.flags |= flagTextEsc
			}
		}
		p.keys = p.keys[:mark]
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(p.in[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				p.out = append(p.out, lit...)
				return nil
			}
		}
		return p.fail(ErrSyntax)
	}
}

func (p *parser) array(depth int) error {
	if depth > p.maxDepth {
		return p.fail(ErrTooDeep)
	}
	p.pos++ // [
	p.out = append(p.out, '[')
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		p.out = append(p.out, ']')
		return nil
	}
	for {
		p.skipSpace()
		if err := p.value(depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.fail(ErrSyntax)
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.out = append(p.out, ',')
		case ']':
			p.pos++
			p.out = append(p.out, ']')
			return nil
		default:
			return p.fail(ErrSyntax)
		}
	}
}

func (p *parser) object(depth int) error {
	if depth > p.maxDepth {
		return p.fail(ErrTooDeep)
	}
	p.pos++ // {
	p.out = append(p.out, '{')
	body, firstNode := len(p.out), len(p.nodes)
	base, keysMark := len(p.members), len(p.keys)
	defer func() { p.members, p.keys = p.members[:base], p.keys[:keysMark] }()
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.out = append(p.out, '}')
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return p.fail(ErrSyntax)
		}
		start := len(p.out)
		keyAt := p.pos
		key, err := p.str()
		if err != nil {
			return err
		}
		if p.build {
			p.key, p.keyEsc = p.decoded(key, start)
			p.haveKey = true
		}
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.fail(ErrSyntax)
		}
		p.pos++
		p.out = append(p.out, ':')
		p.skipSpace()
		if err := p.value(depth); err != nil {
			return err
		}
		p.members = append(p.members, member{key: key, start: start, end: len(p.out)})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.fail(ErrSyntax)
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.out = append(p.out, ',')
		case '}':
			p.pos++
			return p.finishObject(base, body, firstNode, keyAt)
		default:
			return p.fail(ErrSyntax)
		}
	}
}

// finishObject sorts the members written since base by their keys' UTF-16
// code units (RFC 8785 section 3.2.3), refuses duplicates, and closes the
// object. Their text starts at body in out and, when building a tree,
// their nodes at firstNode.
func (p *parser) finishObject(base, body, firstNode, lastKeyAt int) error {
	ms := p.members[base:]
	sorted := true
	for i := 1; i < len(ms); i++ {
		c := compareUTF16(ms[i-1].key, ms[i].key)
		if c == 0 {
			return &Error{Offset: lastKeyAt, Err: ErrDuplicateKey}
		}
		if c > 0 {
			sorted = false
		}
	}
	if !sorted {
		slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.key, b.key) })
		for i := 1; i < len(ms); i++ {
			if compareUTF16(ms[i-1].key, ms[i].key) == 0 {
				return &Error{Offset: lastKeyAt, Err: ErrDuplicateKey}
			}
		}
		if p.build {
			p.reorderNodes(ms, body, firstNode)
		}
		p.permute(ms, body)
	}
	p.out = append(p.out, '}')
	return nil
}

// permute moves the text of the members ms, now sorted, to their places
// in out, where it follows body in input order, one comma between two
// members; the object's length does not change. The largest member is
// moved within out and only the others are set aside in scratch, so that
// sorting an object with one large member (a message body, a file's
// content) does not copy that member a second time.
func (p *parser) permute(ms []member, body int) {
	big := 0
	for i, m := range ms {
		if m.end-m.start > ms[big].end-ms[big].start {
			big = i
		}
	}
	rest := len(p.out) - body - (ms[big].end - ms[big].start)
	p.scratch = slices.Grow(p.scratch[:0], rest)
	at := body // where the largest member lands
	for i, m := range ms {
		if i != big {
			p.scratch = append(p.scratch, p.out[m.start:m.end]...)
		}
		if i < big {
			at += m.end - m.start + 1
		}
	}
	// Every other member is in scratch: the move may overwrite any of
	// their text, and copy handles the overlap with its own.
	copy(p.out[at:], p.out[ms[big].start:ms[big].end])
	at, from := body, 0
	for i, m := range ms {
		if i > 0 {
			p.out[at] = ','
			at++
		}
		n := m.end - m.start
		if i != big {
			copy(p.out[at:at+n], p.scratch[from:from+n])
			from += n
		}
		at += n
	}
}

// reorderNodes moves the nodes of the members ms, now sorted, into that
// order, as finishObject is about to move their text: each member's
// nodes keep their own order and shift, like its bytes, by where the
// member lands. Before it runs, the members' nodes follow each other in
// input order from first, and their text from body in out.
func (p *parser) reorderNodes(ms []member, body, first int) {
	p.nodeSpare = append(p.nodeSpare[:0], p.nodes[first:]...)
	p.nodes = p.nodes[:first]
	// The members' value nodes in input order, where their text starts
	// in the same order: a member's value node is the first whose text
	// starts after the member's key.
	p.valueAt = slices.Grow(p.valueAt[:0], len(ms))
	for n := 0; n < len(p.nodeSpare); n = int(p.nodeSpare[n].end) - first {
		p.valueAt = append(p.valueAt, int32(n))
	}
	at := body // where the member's text will start in out
	for i, m := range ms {
		if i > 0 {
			at++ // the comma
		}
		j, _ := slices.BinarySearchFunc(p.valueAt, int32(m.start), func(n, start int32) int {
			return cmp.Compare(p.nodeSpare[n].start, start+1)
		})
		own := int(p.valueAt[j]) // the member's value node, in nodeSpare
		dByte, dNode := int32(at-m.start), int32(len(p.nodes)-first-own)
		sub := p.nodeSpare[own : int(p.nodeSpare[own].end)-first]
		for _, nd := range sub {
			nd.start += dByte
			nd.stop += dByte
			nd.end += dNode
			if nd.flags&(flagMember|flagKeyEsc) == flagMember {
				nd.key.off += dByte
			}
			if nd.kind == KindString && nd.flags&flagTextEsc == 0 {
				nd.text.off += dByte
			}
			p.nodes = append(p.nodes, nd)
		}
		at += m.end - m.start
	}
}

// compareUTF16 orders two UTF-8 strings by their UTF-16 code units. Byte
// order equals code point order, which differs from UTF-16 order only when
// a supplementary character (a surrogate pair, 0xD800-0xDBFF first) meets a
// code point in 0xE000-0xFFFF.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	ha, la := utf16Units(ra)
	hb, lb := utf16Units(rb)
	if ha != hb {
		return ha - hb
	}
	// Two code points above U+FFFF with one high surrogate: the low one
	// decides. They differ, so this is never 0.
	return la - lb
}

// utf16Units returns r's UTF-16 code units: the first, and the second for
// a code point above U+FFFF (0 otherwise).
func utf16Units(r rune) (int, int) {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return int(hi), int(lo)
	}
	return int(r), 0
}

// str reads a string at p.pos, writes its canonical form, and returns its
// decoded bytes (aliasing the input when it had no escapes).
func (p *parser) str() ([]byte, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			s := p.in[start:p.pos]
			p.pos++
			p.out = append(p.out, '"')
			p.out = append(p.out, s...)
			p.out = append(p.out, '"')
			return s, nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return nil, p.fail(ErrSyntax)
		}
		p.pos++
	}
	return nil, p.fail(ErrSyntax)
}

// escapedStr continues str once an escape was seen: it decodes the string
// into p.keys and then writes it with RFC 8785's escaping.
func (p *parser) escapedStr(start int) ([]byte, error) {
	kStart := len(p.keys)
	p.keys = append(p.keys, p.in[start:p.pos]...)
	for {
		if p.pos >= len(p.in) {
			return nil, p.fail(ErrSyntax)
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			// The capacity cap keeps appends for later keys from writing
			// over this one; a reallocation leaves it in the old array.
			dec := p.keys[kStart:len(p.keys):len(p.keys)]
			p.writeString(dec)
			return dec, nil
		case c < 0x20:
			return nil, p.fail(ErrSyntax)
		case c != '\\':
			p.keys = append(p.keys, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.in) {
			return nil, p.fail(ErrSyntax)
		}
		esc := p.in[p.pos+1]
		p.pos += 2
		switch esc {
		case '"', '\\', '/':
			p.keys = append(p.keys, esc)
		case 'b':
			p.keys = append(p.keys, '\b')
		case 'f':
			p.keys = append(p.keys, '\f')
		case 'n':
			p.keys = append(p.keys, '\n')
		case 'r':
			p.keys = append(p.keys, '\r')
		case 't':
			p.keys = append(p.keys, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return nil, err
			}
			p.keys = utf8.AppendRune(p.keys, r)
		default:
			p.pos -= 2
			return nil, p.fail(ErrSyntax)
		}
	}
}

// unicodeEscape decodes the hex of a \u escape (p.pos just past the "u"),
// joining a surrogate pair and refusing a lone surrogate.
func (p *parser) unicodeEscape() (rune, error) {
	at := p.pos - 2
	r, ok := p.hex4()
	if !ok {
		return 0, p.fail(ErrSyntax)
	}
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, &Error{Offset: at, Err: ErrLoneSurrogate}
	case r >= 0xD800 && r <= 0xDBFF:
		if p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
			return 0, &Error{Offset: at, Err: ErrLoneSurrogate}
		}
		p.pos += 2
		lo, ok := p.hex4()
		if !ok {
			return 0, p.fail(ErrSyntax)
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, &Error{Offset: at, Err: ErrLoneSurrogate}
		}
		return utf16.DecodeRune(r, lo), nil
	}
	return r, nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// writeString writes decoded string bytes with RFC 8785's escaping.
func (p *parser) writeString(s []byte) { p.out = appendString(p.out, s) }

// AppendString appends s to out as an RFC 8785 string: quoted, with the two
// mandatory escapes, the five short control escapes and \u00xx for the
// other control characters; everything else is copied. s must be valid
// UTF-8 (no canonical form holds anything else; check with
// utf8.ValidString): invalid bytes would be copied as they are. For code
// that writes a canonical form of a fixed shape itself, without a parse.
//
// It is kept out of line: inlined into another package, its call of the
// generic appendString makes the compiler assume out escapes, and the
// caller's stack buffer moves to the heap.
//
//go:noinline
func AppendString(out []byte, s string) []byte { return appendString(out, s) }

// appendString appends s as a JSON string with RFC 8785's escaping: the two
// mandatory escapes, the five short control escapes, \u00xx for the other
// control characters, everything else as UTF-8.
//
// Runs of bytes that need no escape are copied whole.
func appendString[S ~string | ~[]byte](out []byte, s S) []byte {
	out = append(out, '"')
	run := 0 // start of the bytes not yet written
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[run:i]...)
		run = i + 1
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			const hexDigits = "0123456789abcdef"
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	out = append(out, s[run:]...)
	return append(out, '"')
}
