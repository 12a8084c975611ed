package mcpgate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/mcpgate"
)

// jnode is a JSON value with its members in the order written, so a test
// can write a message back with one member given twice.
type jnode struct {
	members []jmember // an object's
	elems   []*jnode  // an array's
	raw     string    // a scalar's JSON text
	kind    byte      // '{', '[' or 0
}

type jmember struct {
	key string
	val *jnode
}

func parseOrdered(t *testing.T, text string) *jnode {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var read func() *jnode
	read = func() *jnode {
		tok, err := dec.Token()
		require.NoError(t, err)
		switch tok {
		case json.Delim('{'):
			n := &jnode{kind: '{'}
			for dec.More() {
				k, err := dec.Token()
				require.NoError(t, err)
				n.members = append(n.members, jmember{key: k.(string), val: read()})
			}
			_, err := dec.Token()
			require.NoError(t, err)
			return n
		case json.Delim('['):
			n := &jnode{kind: '['}
			for dec.More() {
				n.elems = append(n.elems, read())
			}
			_, err := dec.Token()
			require.NoError(t, err)
			return n
		}
		b, err := json.Marshal(tok)
		require.NoError(t, err)
		return &jnode{raw: string(b)}
	}
	return read()
}

// write writes n; keys are written as given (already JSON string text).
func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(m.key)
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}

// quoteKeys turns every key into its JSON text, so write can put other
// spellings of one in.
func (n *jnode) quoteKeys() {
	for i := range n.members {
		k, _ := json.Marshal(n.members[i].key)
		n.members[i].key = string(k)
		n.members[i].val.quoteKeys()
	}
	for _, e := range n.elems {
		e.quoteKeys()
	}
}

// objects lists every object of n, n first.
func (n *jnode) objects() []*jnode {
	var out []*jnode
	if n.kind == '{' {
		out = append(out, n)
	}
	for _, m := range n.members {
		out = append(out, m.val.objects()...)
	}
	for _, e := range n.elems {
		out = append(out, e.objects()...)
	}
	return out
}

// twinSpellings are keys a Go reader takes for key (JSON text): itself,
// with its first letter escaped, and in other letter case.
func twinSpellings(key string) []string {
	name := key[1 : len(key)-1]
	out := []string{key}
	for i, r := range name {
		if unicode.IsLetter(r) && r < 0x80 {
			out = append(out, `"`+name[:i]+fmt.Sprintf(`\u%04x`, r)+name[i+1:]+`"`)
			break
		}
	}
	if up := strings.ToUpper(name); up != name {
		out = append(out, `"`+up+`"`)
	}
	return out
}

// duplicatedVariants returns msg with one member given twice, for every
// member of every object, in every twin spelling, the twin before and
// after it, its value another one.
func duplicatedVariants(t *testing.T, msg string) []string {
	var out []string
	root := parseOrdered(t, msg)
	root.quoteKeys()
	for oi := range root.objects() {
		for mi := range root.objects()[oi].members {
			for si := range twinSpellings(root.objects()[oi].members[mi].key) {
				for _, before := range []bool{true, false} {
					fresh := parseOrdered(t, msg)
					fresh.quoteKeys()
					o := fresh.objects()[oi]
					m := o.members[mi]
					twin := jmember{key: twinSpellings(m.key)[si], val: &jnode{raw: `"another value"`}}
					at := mi + 1
					if before {
						at = mi
					}
					o.members = append(o.members[:at], append([]jmember{twin}, o.members[at:]...)...)
					var b strings.Builder
					fresh.write(&b)
					out = append(out, b.String())
				}
			}
		}
	}
	return out
}

const strictCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file",` +
	`"arguments":{"path":"a.txt","opts":{"x":1,"list":[{"k":"v"}]}},"_meta":{"progressToken":"p-1"}}}`

// rawHost speaks newline-delimited JSON-RPC to a proxy over pipes.
type rawHost struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

func (h *rawHost) send(t *testing.T, line string) {
	_, err := io.WriteString(h.in, line+"\n")
	require.NoError(t, err)
}

func (h *rawHost) next(t *testing.T) map[string]json.RawMessage {
	require.True(t, h.out.Scan(), "the proxy hung up")
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(h.out.Bytes(), &m), h.out.Text())
	return m
}

// connectRaw runs serve (the proxy, strict or not) on an IOTransport and
// initializes a session over it.
func connectRaw(t *testing.T, serve func(context.Context, mcp.Transport) error) *rawHost {
	hr, pw := io.Pipe() // host to proxy
	pr, hw := io.Pipe() // proxy to host
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, &mcp.IOTransport{Reader: hr, Writer: hw}) }()
	t.Cleanup(func() {
		cancel()
		_ = pw.Close()
		_ = pr.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the proxy did not stop")
		}
	})
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	h := &rawHost{in: pw, out: sc}
	h.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.Contains(t, h.next(t), "result")
	h.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// TestStrictRefusesEveryDuplicatedMember: for every member of a
// tools/call request (the envelope, params, name, arguments at any depth,
// _meta), given twice, exactly, with an escape or in other letter case,
// before or after itself, the proxy answers a JSON-RPC error naming the
// request's id (null when the id itself is the twin) and runs nothing;
// the session goes on, and the request spelled once runs.
func TestStrictRefusesEveryDuplicatedMember(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, writeFile(w.dir, "a.txt", "A"))
	h := connectRaw(t, w.proxy.Run)
	variants := duplicatedVariants(t, strictCall)
	require.Greater(t, len(variants), 60)
	for i, v := range variants {
		id := fmt.Sprint(1000 + i)
		v = strings.Replace(v, `"id":7`, `"id":`+id, 1)
		h.send(t, v)
		resp := h.next(t)
		require.Contains(t, resp, "error", v)
		var e struct {
			Code int64 `json:"code"`
		}
		require.NoError(t, json.Unmarshal(resp["error"], &e))
		assert.EqualValues(t, -32600, e.Code, v)
		if strings.Count(strings.ToLower(v), `"id"`) == 1 && !strings.Contains(v, `"\u0069d"`) {
			assert.Equal(t, id, string(resp["id"]), v)
		} else {
			assert.Equal(t, "null", string(resp["id"]), v)
		}
	}
	assert.Zero(t, w.upstream.count("read_file"), "a refused message ran")
	h.send(t, strictCall)
	resp := h.next(t)
	require.Contains(t, resp, "result", "the message spelled once runs")
	assert.Equal(t, 1, w.upstream.count("read_file"))
}

// TestStrictBitesTheSDKAlone: without the check, the SDK takes the last
// of two names, so a request a first-wins reader takes for an unknown
// tool runs read_file.
func TestStrictBitesTheSDKAlone(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, writeFile(w.dir, "a.txt", "A"))
	twice := strings.Replace(strictCall, `"name":"read_file"`, `"name":"no_such_tool","name":"read_file"`, 1)
	naive := connectRaw(t, w.proxy.Server().Run)
	naive.send(t, twice)
	assert.Contains(t, naive.next(t), "result")
	assert.Equal(t, 1, w.upstream.count("read_file"), "the SDK alone ran the second name")

	strict := connectRaw(t, w.proxy.Run)
	strict.send(t, twice)
	assert.Contains(t, strict.next(t), "error")
	assert.Equal(t, 1, w.upstream.count("read_file"))
}

// TestStrictHTTP: the streamable HTTP handler refuses the same messages
// with 400 and a JSON-RPC error, before any session or call.
func TestStrictHTTP(t *testing.T) {
	w := newWorld(t)
	token := strings.Repeat("t", 40)
	hh, err := w.proxy.HTTPHandler(token)
	require.NoError(t, err)
	srv := httptest.NewServer(hh)
	defer srv.Close()
	post := func(body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	variants := duplicatedVariants(t, strictCall)
	for _, v := range variants {
		code, body := post(v)
		assert.Equal(t, http.StatusBadRequest, code, v)
		assert.Contains(t, body, `"code":-32600`, v)
	}
	code, _ := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	assert.Equal(t, http.StatusOK, code)
	assert.Zero(t, w.upstream.count("read_file"))
}

// FuzzStrictMembers: the check never panics, agrees with the check by
// encoding/json's tokens on every JSON text, and refuses every message
// that decodes to fewer members than it spells.
func FuzzStrictMembers(f *testing.F) {
	f.Add([]byte(strictCall))
	f.Add([]byte(`{"a":1,"A":2}`))
	f.Add([]byte(`[{"a":{"b":[{"c":1,"c":2}]}}]`))
	f.Add([]byte(`{"\u0061":1,"a":2}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		refused := mcpgate.RefusesMembers(raw)
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		if byTokens := mcpgate.RefusesMembersByTokens(raw); byTokens != refused {
			t.Fatalf("the scanner says %v, the tokens %v: %q", refused, byTokens, raw)
		}
		if hasCollapsedMembers(raw) && !refused {
			t.Fatalf("not refused: %q", raw)
		}
	})
}

// hasCollapsedMembers reports whether decoding raw into maps loses a
// member: two names in one object that are equal once unescaped.
func hasCollapsedMembers(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []map[string]bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, map[string]bool{})
			expectKey = true
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			expectKey = false
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if s, ok := tok.(string); ok && expectKey {
				if stack[len(stack)-1][s] {
					return true
				}
				stack[len(stack)-1][s] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}
