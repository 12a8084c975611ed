package pgcycle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
)

// The counting proxy sits between the gates and PostgreSQL and reads the
// protocol's message frames in both directions, forwarding every byte
// unchanged. From them it counts, exactly and without touching the code
// under measure:
//
//   - round trips: ReadyForQuery messages, one per Sync or simple Query,
//     each a wait of the client for the server;
//   - statements: Execute and simple Query messages, by their text;
//   - transactions: an explicit one ends when ReadyForQuery goes from
//     "in a transaction" back to idle; an autocommit statement is a
//     ReadyForQuery idle after idle with a statement in between.

// keep bounds the bytes of one message body the parser holds: enough for
// a statement's first line, never the message (a bound on external input).
const keep = 512

// Protocol constants (PostgreSQL frontend/backend protocol 3.0).
const (
	protocol3  = 196608   // StartupMessage's version
	sslRequest = 80877103 // SSLRequest, GSSENCRequest and CancelRequest
	gssRequest = 80877104 // are untyped too; the proxy does not follow
	cancelReq  = 80877102 // an encrypted stream
)

// errFrame is a frame the parser cannot follow; forwarding goes on, the
// counts stop.
var errFrame = errors.New("pgcycle: malformed or unsupported protocol frame")

// framer splits a byte stream into protocol messages, incrementally, and
// calls on with each message's type and (at most keep bytes of) its
// body. Before typed is set it reads untyped messages (the startup
// phase of the client's side) and calls on with type 0.
type framer struct {
	typed bool
	hdr   [5]byte
	have  int    // header bytes read
	need  int    // body bytes still to read
	body  []byte // the kept prefix of the body
	typ   byte
	err   error
	on    func(typ byte, body []byte) error
}

// feed consumes p. After an error it ignores the rest of the stream.
func (f *framer) feed(p []byte) {
	for len(p) > 0 && f.err == nil {
		hl := 4
		if f.typed {
			hl = 5
		}
		if f.have < hl {
			n := copy(f.hdr[f.have:hl], p)
			f.have += n
			p = p[n:]
			if f.have < hl {
				return
			}
			f.typ = 0
			length := int64(int32(binary.BigEndian.Uint32(f.hdr[hl-4 : hl])))
			if f.typed {
				f.typ = f.hdr[0]
			}
			if length < 4 {
				f.err = errFrame
				return
			}
			f.need = int(length - 4)
			f.body = f.body[:0]
		}
		n := min(f.need, len(p))
		if room := keep - len(f.body); room > 0 {
			f.body = append(f.body, p[:min(n, room)]...)
		}
		f.need -= n
		p = p[n:]
		if f.need == 0 {
			f.have = 0
			if err := f.on(f.typ, f.body); err != nil {
				f.err = err
			}
		}
	}
}

// counts is a snapshot of a wireCount.
type counts struct {
	RoundTrips int64 // ReadyForQuery messages
	Statements int64 // Execute and simple Query messages
	Parses     int64 // Parse messages (statements prepared)
	Explicit   int64 // explicit transactions ended (commit or rollback)
	Autocommit int64 // statements run outside an explicit transaction
	Errors     int64 // ErrorResponse messages
	Texts      map[string]int64
}

// sub returns c - o.
func (c counts) sub(o counts) counts {
	d := counts{RoundTrips: c.RoundTrips - o.RoundTrips, Statements: c.Statements - o.Statements,
		Parses: c.Parses - o.Parses, Explicit: c.Explicit - o.Explicit, Autocommit: c.Autocommit - o.Autocommit,
		Errors: c.Errors - o.Errors, Texts: map[string]int64{}}
	for k, v := range c.Texts {
		if n := v - o.Texts[k]; n != 0 {
			d.Texts[k] = n
		}
	}
	return d
}

// wireCount accumulates the counts of every connection through a proxy.
type wireCount struct {
	mu  sync.Mutex
	c   counts
	err error // the first framing error of any connection
}

func newWireCount() *wireCount { return &wireCount{c: counts{Texts: map[string]int64{}}} }

// snapshot returns the counts so far, and the first framing error.
func (w *wireCount) snapshot() (counts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.c
	c.Texts = maps.Clone(w.c.Texts)
	return c, w.err
}

// conn is one client connection's protocol state.
type conn struct {
	w        *wireCount
	stmts    map[string]string // prepared statement name -> text
	bound    string            // text of the portal last bound
	inTx     bool              // the last ReadyForQuery said "in a transaction"
	ran      bool              // a statement ran since the last ReadyForQuery
	client   framer
	server   framer
	maxStmts int
}

func newConn(w *wireCount) *conn {
	c := &conn{w: w, stmts: map[string]string{}, maxStmts: 4096}
	c.client = framer{on: c.fromClient}
	c.server = framer{typed: true, on: c.fromServer}
	return c
}

// cstring splits b at its first NUL; a body cut at keep may hold none.
func cstring(b []byte) (string, []byte) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i]), b[i+1:]
	}
	return string(b), nil
}

// shortText is a statement's text with its white space collapsed, cut to
// 80 bytes: a key to count statements by.
func shortText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

func (c *conn) fromClient(typ byte, body []byte) error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	switch typ {
	case 0: // untyped: startup phase
		if len(body) < 4 {
			return errFrame
		}
		switch binary.BigEndian.Uint32(body) {
		case protocol3:
			c.client.typed = true
		case cancelReq:
		default: // SSL or GSS encryption, or an unknown version
			return errFrame
		}
	case 'P':
		name, rest := cstring(body)
		text, _ := cstring(rest)
		c.w.c.Parses++
		if len(c.stmts) < c.maxStmts {
			c.stmts[name] = shortText(text)
		}
	case 'B':
		_, rest := cstring(body)
		name, _ := cstring(rest)
		c.bound = c.stmts[name]
	case 'E':
		c.w.c.Statements++
		c.w.c.Texts[c.bound]++
		c.ran = true
	case 'Q':
		text, _ := cstring(body)
		c.w.c.Statements++
		c.w.c.Texts[shortText(text)]++
		c.ran = true
	case 'C': // Close of a statement or portal
		if len(body) > 0 && body[0] == 'S' {
			name, _ := cstring(body[1:])
			delete(c.stmts, name)
		}
	}
	return nil
}

func (c *conn) fromServer(typ byte, body []byte) error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	switch typ {
	case 'Z':
		if len(body) < 1 {
			return errFrame
		}
		c.w.c.RoundTrips++
		idle := body[0] == 'I'
		switch {
		case idle && c.inTx:
			c.w.c.Explicit++
		case idle && c.ran:
			c.w.c.Autocommit++
		}
		c.inTx, c.ran = !idle, false
	case 'E':
		c.w.c.Errors++
	}
	return nil
}

// fail records the first framing error.
func (c *conn) fail(err error) {
	if err == nil {
		return
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.w.err == nil {
		c.w.err = err
	}
}

// proxy forwards TCP connections to upstream, counting on the way.
type proxy struct {
	ln       net.Listener
	upstream string
	count    *wireCount
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     map[net.Conn]struct{}
}

// startProxy listens on a loopback port and forwards to upstream
// (host:port) until tb ends.
func startProxy(tb testing.TB, upstream string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream, count: newWireCount(), open: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = down.Close()
			continue
		}
		if !p.track(down) || !p.track(up) {
			_ = down.Close()
			_ = up.Close()
			return
		}
		c := newConn(p.count)
		p.wg.Add(2)
		go p.pipe(up, down, &c.client, c)
		go p.pipe(down, up, &c.server, c)
	}
}

// pipe copies from src to dst, feeding what passes to f.
func (p *proxy) pipe(dst, src net.Conn, f *framer, c *conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.feed(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.fail(err)
			}
			break
		}
	}
	c.fail(f.err)
	_ = dst.Close()
	_ = src.Close()
}

// close stops accepting, closes every connection and waits for the pipes.
func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		_ = c.Close()
	}
	p.open = nil
	p.mu.Unlock()
	p.wg.Wait()
}
