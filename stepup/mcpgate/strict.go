package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type object struct{ keys []string } // folded names so far
	var stack []*object
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
				stack = append(stack, &object{})
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
				o := stack[len(stack)-1]
				buf = foldCase(buf[:0], t)
				for _, k := range o.keys {
					if k == string(buf) {
						return ErrDuplicateMember
					}
				}
				o.keys = append(o.keys, string(buf))
				expectKey = false
				continue
			}
		}
		// A value ended: inside an object, a key comes next.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
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
// [Proxy.HTTPHandler] does the same for every POST body.
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
