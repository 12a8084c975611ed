package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Strict JSON-RPC. Go's JSON readers, and so the MCP SDK the proxy is
// built on, take the last of two members of one name, and match member
// names to fields case-insensitively; a reader in front of the gateway (a
// host's log, an auditing proxy) may take the first. A message naming a
// member twice, in any object at any depth (the envelope, params, name,
// arguments, _meta), or twice in letter cases Go folds together, is
// therefore refused before the SDK reads it: what the gate decides on is
// the only reading the message has.

// ErrDuplicateMember means a JSON-RPC message names one member twice in
// one object, exactly or in two letter cases.
var ErrDuplicateMember = errors.New("mcpgate: a JSON-RPC message names a member twice")

// reasonDuplicateMember is the JSON-RPC error message of a refused one.
const reasonDuplicateMember = "invalid request: a member is named twice in one object " +
	"(exactly, or in two letter cases); the message was not read"

// checkMembers returns [ErrDuplicateMember] when some object of the JSON
// text raw has two members whose names are equal once unescaped, or fold
// alike as Go's JSON reader folds them. Text that is not JSON is left to
// the SDK, which refuses it; nil then.
func checkMembers(raw []byte) error {
	sc := memberScanner{b: raw}
	dup, ok := sc.value(0)
	if ok {
		sc.space()
		if sc.i == len(raw) {
			if dup {
				return ErrDuplicateMember
			}
			return nil
		}
	}
	// Text the fast scanner does not follow (or several values): the
	// decoder's tokens decide.
	return checkMembersByTokens(raw)
}

// checkMembersByTokens is checkMembers by encoding/json's tokens.
func checkMembersByTokens(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*memberSet // nil for an array
	expectKey := false
	var buf []byte
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or not JSON: the SDK answers that
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &memberSet{})
				expectKey = true
				continue
			case '}', ']':
				stack = stack[:len(stack)-1]
			case '[':
				stack = append(stack, nil)
				expectKey = false
				continue
			}
		case string:
			if expectKey {
				buf = foldCase(buf[:0], t)
				if stack[len(stack)-1].add(buf) {
					return ErrDuplicateMember
				}
				expectKey = false
				continue
			}
		}
		// A value ended: inside an object, a key comes next.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

// memberSet is the folded names of one object's members so far: a list
// while the object is short, a map beyond, so that checking an object of
// n members costs O(n), not O(n²).
type memberSet struct {
	list []string
	set  map[string]struct{}
}

// shortObject is how many members a memberSet keeps in its list.
const shortObject = 8

// add adds the folded name and reports whether the object had it already.
func (m *memberSet) add(name []byte) bool {
	if m.set != nil {
		if _, ok := m.set[string(name)]; ok {
			return true
		}
		m.set[string(name)] = struct{}{}
		return false
	}
	for _, k := range m.list {
		if k == string(name) {
			return true
		}
	}
	if len(m.list) < shortObject {
		m.list = append(m.list, string(name))
		return false
	}
	m.set = make(map[string]struct{}, 4*shortObject)
	for _, k := range m.list {
		m.set[k] = struct{}{}
	}
	m.set[string(name)] = struct{}{}
	m.list = nil
	return false
}

// maxScanDepth is the nesting the fast scanner follows; deeper text goes
// to the decoder, which has its own bound.
const maxScanDepth = 1000

// memberScanner walks JSON text once, without building values, and
// reports whether some object names a member twice (folded as foldCase
// does). ok is false for anything it does not follow as JSON.
type memberScanner struct {
	b   []byte
	i   int
	buf []byte
}

func (s *memberScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *memberScanner) value(depth int) (dup, ok bool) {
	s.space()
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return false, true
		}
		for {
			d, ok := s.value(depth + 1)
			if !ok {
				return false, false
			}
			dup = dup || d
			s.space()
			if s.i >= len(s.b) {
				return false, false
			}
			switch s.b[s.i] {
			case ',':
				s.i++
			case ']':
				s.i++
				return dup, true
			default:
				return false, false
			}
		}
	case c == '"':
		_, ok := s.str()
		return false, ok
	case c == 't':
		return false, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return false, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.i++
		for s.i < len(s.b) && strings.IndexByte("0123456789+-.eE", s.b[s.i]) >= 0 {
			s.i++
		}
		return false, true
	}
	return false, false
}

func (s *memberScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

func (s *memberScanner) object(depth int) (dup, ok bool) {
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return false, true
	}
	var keys memberSet
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false, false
		}
		key, ok := s.str()
		if !ok {
			return false, false
		}
		s.buf = foldCase(s.buf[:0], key)
		if keys.add(s.buf) {
			dup = true
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false, false
		}
		s.i++
		d, ok := s.value(depth)
		if !ok {
			return false, false
		}
		dup = dup || d
		s.space()
		if s.i >= len(s.b) {
			return false, false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return dup, true
		default:
			return false, false
		}
	}
}

// str reads a string at s.i and returns its text, unescaped.
func (s *memberScanner) str() (string, bool) {
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			lit := s.b[start+1 : s.i-1]
			if !escaped {
				if !utf8.Valid(lit) {
					return "", false
				}
				return string(lit), true
			}
			var out string
			if json.Unmarshal(s.b[start:s.i], &out) != nil {
				return "", false
			}
			return out, true
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return "", false
		default:
			s.i++
		}
	}
	return "", false
}

// foldCase appends name with each rune replaced by the smallest rune of
// its simple fold orbit, as encoding/json matches names (bytes.EqualFold).
func foldCase(dst []byte, name string) []byte {
	for _, r := range name {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		}
		dst = utf8.AppendRune(dst, foldRune(r))
	}
	return dst
}

// refusal is the JSON-RPC error answer to raw, a refused message: with
// raw's id when it has exactly one top-level "id", otherwise null.
func refusal(raw []byte) []byte {
	id := json.RawMessage("null")
	var env map[string]json.RawMessage
	if idOnce(raw) && json.Unmarshal(raw, &env) == nil {
		if v, ok := env["id"]; ok {
			id = v
		}
	}
	msg, _ := json.Marshal(reasonDuplicateMember)
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"error":{"code":-32600,"message":`...)
	out = append(out, msg...)
	return append(out, "}}\n"...)
}

// idOnce reports whether the top-level object of raw has exactly one
// member that folds to "id".
func idOnce(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := k.(string); ok && string(foldCase(nil, s)) == "ID" {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return n == 1
}

// StrictTransport returns t refusing every message that names a member
// twice ([ErrDuplicateMember]) before the MCP SDK reads it: a request is
// answered with a JSON-RPC error (-32600), a notification dropped. It
// reads the bytes of [*mcp.StdioTransport] and [*mcp.IOTransport]; any
// other transport is returned as it is. [Proxy.Run] applies it, and
// [Proxy.HTTPHandler] does the same for every POST body. As the SDK's own
// reader does, it reads the transport's reader until that ends: a
// connection closed meanwhile stops it at its next message.
func StrictTransport(t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return &strictIO{r: os.Stdin, w: nopWriteCloser{os.Stdout}, max: t.MaxLineLength}
	case *mcp.IOTransport:
		return &strictIO{r: t.Reader, w: t.Writer, max: t.MaxLineLength}
	}
	return t
}

// strictIO is a newline-delimited JSON transport whose incoming messages
// are checked before the SDK's own connection reads them from a pipe.
// Answers to refused messages are written between the SDK's messages,
// each of which it writes in one call.
type strictIO struct {
	r   io.Reader
	w   io.WriteCloser
	max int
}

// Connect implements mcp.Transport.
func (s *strictIO) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: s.w}
	go filterMessages(s.r, pw, w, s.max)
	return (&mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: s.max}).Connect(ctx)
}

// filterMessages copies each JSON value of r to pw on a line of its own,
// unless it names a member twice: then it answers it on w. It ends when
// r or pw does, passing r's error on.
func filterMessages(r io.Reader, pw *io.PipeWriter, w io.Writer, max int) {
	if max <= 0 {
		max = MaxFrameBytes
	}
	lim := &frameCounter{r: r, max: int64(max) + 1<<20} // the decoder reads ahead
	dec := json.NewDecoder(lim)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			_ = pw.CloseWithError(err)
			return
		}
		lim.n = 0
		if checkMembers(raw) != nil {
			if !isNotification(raw) {
				if _, err := w.Write(refusal(raw)); err != nil {
					_ = pw.CloseWithError(err)
					return
				}
			}
			continue
		}
		if _, err := pw.Write(append(raw, '\n')); err != nil {
			return // the SDK's connection closed
		}
	}
}

// isNotification reports whether raw is a single message without an id.
func isNotification(raw []byte) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal(raw, &env) != nil {
		return false
	}
	_, hasID := env["id"]
	return !hasID
}

// frameCounter fails a read once more than max bytes were read since n
// was last reset.
type frameCounter struct {
	r   io.Reader
	n   int64
	max int64
}

func (f *frameCounter) Read(p []byte) (int, error) {
	if f.n >= f.max {
		return 0, ErrOutputTooLarge
	}
	if int64(len(p)) > f.max-f.n {
		p = p[:f.max-f.n]
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	return n, err
}

// lockedWriter serializes whole writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Run serves the proxy on t until the host hangs up or ctx ends, every
// incoming message checked as [StrictTransport] says.
func (p *Proxy) Run(ctx context.Context, t mcp.Transport) error {
	return p.server.Run(ctx, StrictTransport(t))
}
