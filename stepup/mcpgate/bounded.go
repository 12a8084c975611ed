package mcpgate

import (
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrameBytes bounds one message an upstream server sends: a JSON
// answer over HTTP, one event of an HTTP event stream, or one line over a
// command's stdout (where the MCP SDK enforces the same bound). A larger
// one ends the connection before it is read whole, so an upstream cannot
// make the gateway hold more than this for one message.
const MaxFrameBytes = mcp.DefaultMaxLineLength

// boundedTransport is an http.RoundTripper whose responses' bodies fail
// with [ErrOutputTooLarge] past max bytes of one message: the whole body,
// or one event of a text/event-stream body (the bytes since its last
// blank line).
type boundedTransport struct {
	next http.RoundTripper
	max  int64
}

// boundedClient returns a client like hc (nil: http.DefaultClient) whose
// responses are bounded as [boundedTransport] says.
func boundedClient(hc *http.Client, max int64) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *hc
	c.Transport = &boundedTransport{next: next, max: max}
	return &c
}

// RoundTrip implements http.RoundTripper.
func (t *boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &frameLimit{rc: resp.Body, max: t.max, events: mt == "text/event-stream"}
	return resp, nil
}

// frameLimit reads a body, failing once one message is over max bytes.
// In an event stream a message ends with a blank line: two line ends in
// a row, each "\n", "\r" or "\r\n"; the next message starts with the
// byte after it.
type frameLimit struct {
	rc     io.ReadCloser
	max    int64
	events bool
	n      int64 // bytes of the current message
	ends   int   // line ends in a row just read (events only)
	cr     bool  // the last byte was '\r' (events only)
	blank  bool  // the current message has ended (events only)
	err    error
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.rc.Read(p)
	for i := 0; i < n; i++ {
		if f.events {
			f.see(p[i])
		}
		f.n++
		if f.n > f.max {
			f.err = fmt.Errorf("%w: one message of the upstream server is over %d bytes", ErrOutputTooLarge, f.max)
			return i, f.err
		}
	}
	return n, err
}

// see follows the line ends of an event stream before b is counted,
// starting a new message with b when the current one has ended.
func (f *frameLimit) see(b byte) {
	half := b == '\n' && f.cr // the second byte of "\r\n"
	if f.blank && !half {
		f.n, f.blank = 0, false
	}
	switch {
	case half:
		f.cr = false
	case b == '\n' || b == '\r':
		f.cr = b == '\r'
		if f.ends++; f.ends == 2 {
			f.blank, f.ends = true, 0
		}
	default:
		f.cr, f.ends = false, 0
	}
}

// Close implements io.Closer.
func (f *frameLimit) Close() error { return f.rc.Close() }
