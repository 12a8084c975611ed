package pgcycle

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frame is one typed protocol message.
func frame(typ byte, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(4+len(b)))
	return append(out, b...)
}

// untyped is a startup-phase message with code and rest.
func untyped(code uint32, rest []byte) []byte {
	out := make([]byte, 8, 8+len(rest))
	binary.BigEndian.PutUint32(out, uint32(8+len(rest)))
	binary.BigEndian.PutUint32(out[4:], code)
	return append(out, rest...)
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// exchange is what a client sends in one round trip and what the server
// answers, the answer ending with ReadyForQuery.
type exchange struct{ client, server []byte }

// session is one connection's exchanges: a prepared statement run twice
// in an explicit transaction, once in autocommit, a simple query that
// fails, and a prepare alone. The proxy sees them in this order: a
// client sends its next round trip only after the ReadyForQuery it
// waits for has passed.
func session() []exchange {
	z := func(status byte) []byte { return frame('Z', []byte{status}) }
	join := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	bind := join(frame('B', cstr(""), cstr("s1"), []byte{0, 0, 0, 0, 0, 0}), frame('E', cstr(""), []byte{0, 0, 0, 0}))
	return []exchange{
		{untyped(protocol3, join(cstr("user"), cstr("asu"), []byte{0})), join(frame('R', []byte{0, 0, 0, 0}), z('I'))},
		// Prepare alone: Parse, Describe, Sync.
		{join(frame('P', cstr("s1"), cstr("UPDATE t\n   SET n = n + 1 WHERE id = $1"), []byte{0, 0}),
			frame('D', []byte{'S'}, cstr("s1")), frame('S')), join(frame('1'), z('I'))},
		// An explicit transaction: BEGIN, s1 twice in one pipeline, COMMIT.
		{frame('Q', cstr("BEGIN")), join(frame('C', cstr("BEGIN")), z('T'))},
		{join(bind, bind, frame('S')), join(frame('2'), frame('C', cstr("UPDATE 1")), frame('2'), frame('C', cstr("UPDATE 1")), z('T'))},
		{frame('Q', cstr("COMMIT")), join(frame('C', cstr("COMMIT")), z('I'))},
		// Autocommit: s1 once, then a simple query that fails.
		{join(bind, frame('S')), join(frame('2'), frame('C', cstr("UPDATE 1")), z('I'))},
		{frame('Q', cstr("SELECT nothing")), join(frame('E', cstr("SERROR")), z('I'))},
		{frame('X'), nil},
	}
}

// feedChunks feeds b to f in chunks cut where cut says.
func feedChunks(f *framer, b []byte, cut func(rest int) int) {
	for len(b) > 0 {
		n := min(max(1, cut(len(b))), len(b))
		f.feed(b[:n])
		b = b[n:]
	}
}

// countSession counts a session fed in chunks, exchange by exchange.
func countSession(t *testing.T, cut func(int) int) counts {
	t.Helper()
	w := newWireCount()
	c := newConn(w)
	for _, x := range session() {
		feedChunks(&c.client, x.client, cut)
		feedChunks(&c.server, x.server, cut)
	}
	require.NoError(t, c.client.err)
	require.NoError(t, c.server.err)
	got, err := w.snapshot()
	require.NoError(t, err)
	return got
}

// TestWireCountsASession checks every count on a session whose counts are
// known, fed whole.
func TestWireCountsASession(t *testing.T) {
	got := countSession(t, func(rest int) int { return rest })
	assert.Equal(t, counts{
		RoundTrips: 7, // startup, prepare, BEGIN, pipeline, COMMIT, autocommit, the failed query
		Statements: 6, // BEGIN, s1 twice, COMMIT, s1, SELECT
		Parses:     1, Explicit: 1, Autocommit: 2, Errors: 1,
		Texts: map[string]int64{"BEGIN": 1, "COMMIT": 1, "UPDATE t SET n = n + 1 WHERE id = $1": 3, "SELECT nothing": 1},
	}, got)
}

// TestWireCountsAnyChunking feeds the same session cut at random places,
// down to a byte at a time: the counts never depend on how the stream
// arrives.
func TestWireCountsAnyChunking(t *testing.T) {
	want := countSession(t, func(rest int) int { return rest })
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 27))
		maxChunk := 1 + r.IntN(40)
		got := countSession(t, func(int) int { return 1 + r.IntN(maxChunk) })
		require.Equal(t, want, got, "seed %d, chunks up to %d bytes", seed, maxChunk)
	}
}

// TestWireTransactions checks how ReadyForQuery statuses count as
// explicit transactions and autocommit statements.
func TestWireTransactions(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		steps                string // per step: q = a statement ran, then the status letter
		explicit, autocommit int64
	}{
		{"nothing ran", "I I", 0, 0},
		{"autocommit statements", "qI qI qI", 0, 3},
		{"a transaction", "qT qT qI", 1, 0},
		{"a failed transaction rolled back", "qT qE qI", 1, 0},
		{"transaction then autocommit", "qT qI qI", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWireCount()
			c := newConn(w)
			c.client.typed = true
			for st := range strings.FieldsSeq(tc.steps) {
				if st[0] == 'q' {
					c.client.feed(frame('Q', cstr("x")))
				}
				c.server.feed(frame('Z', []byte{st[len(st)-1]}))
			}
			got, err := w.snapshot()
			require.NoError(t, err)
			assert.Equal(t, tc.explicit, got.Explicit)
			assert.Equal(t, tc.autocommit, got.Autocommit)
		})
	}
}

// TestFramerRefuses checks that what the counter cannot follow stops the
// counts with errFrame: an encrypted stream, an unknown protocol, a
// length that cannot be.
func TestFramerRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client []byte
	}{
		{"SSL request", untyped(sslRequest, nil)},
		{"GSS encryption request", untyped(gssRequest, nil)},
		{"protocol 2", untyped(2<<16, nil)},
		{"length below its own size", append(untyped(protocol3, nil), 'Q', 0, 0, 0, 3)},
		{"negative length", append(untyped(protocol3, nil), 'Q', 0xff, 0xff, 0xff, 0xff)},
		{"short startup", []byte{0, 0, 0, 6, 0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConn(newWireCount())
			c.client.feed(tc.client)
			c.client.feed(frame('Q', cstr("SELECT 1")))
			require.ErrorIs(t, c.client.err, errFrame)
			got, _ := c.w.snapshot()
			assert.Zero(t, got.Statements, "nothing is counted after the frame it cannot follow")
		})
	}
}

// TestFramerKeepsABoundedPrefix checks that a message of any length,
// arriving in any chunks, is held only up to keep bytes.
func TestFramerKeepsABoundedPrefix(t *testing.T) {
	for _, size := range []int{0, 1, keep - 1, keep, keep + 1, 1 << 20} {
		var seen []int
		f := framer{typed: true, on: func(_ byte, body []byte) error { seen = append(seen, len(body)); return nil }}
		msg := frame('Q', bytes.Repeat([]byte{'x'}, size))
		feedChunks(&f, msg, func(int) int { return 7919 })
		feedChunks(&f, frame('S'), func(int) int { return 1 })
		require.NoError(t, f.err)
		assert.Equal(t, []int{min(size, keep), 0}, seen, "size %d", size)
		assert.LessOrEqual(t, cap(f.body), 2*keep)
	}
}

// FuzzFramer feeds any bytes, whole and cut at a fuzzed place: the
// framer never panics, never holds more than keep bytes of a body, and
// frames the same messages however the stream is cut.
func FuzzFramer(f *testing.F) {
	var client, server []byte
	for _, x := range session() {
		client, server = append(client, x.client...), append(server, x.server...)
	}
	f.Add(client, 3, true)
	f.Add(server, 17, false)
	f.Add([]byte{'Q', 0, 0, 0, 4}, 1, false)
	f.Fuzz(func(t *testing.T, b []byte, at int, startup bool) {
		type msg struct {
			typ  byte
			body string
		}
		run := func(chunks ...[]byte) ([]msg, error) {
			var got []msg
			fr := framer{typed: !startup, on: func(typ byte, body []byte) error {
				if len(body) > keep {
					t.Fatalf("body of %d bytes held", len(body))
				}
				got = append(got, msg{typ, string(body)})
				return nil
			}}
			for _, c := range chunks {
				fr.feed(c)
			}
			return got, fr.err
		}
		whole, werr := run(b)
		cut := 0
		if len(b) > 0 {
			cut = ((at % len(b)) + len(b)) % len(b)
		}
		split, serr := run(b[:cut], b[cut:])
		require.Equal(t, whole, split)
		require.Equal(t, werr, serr)
	})
}

// TestProxyCountsARealSession runs a transaction and an autocommit
// statement through the proxy against PostgreSQL and checks the counts,
// and that every byte passes: the answers are right.
func TestProxyCountsARealSession(t *testing.T) {
	base := dsn(t)
	p := startProxy(t, hostPort(t, base))
	c := connect(t, withParams(t, base, p.addr(), "", nil))
	ctx := context.Background()
	before, err := p.count.snapshot()
	require.NoError(t, err)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(ctx, "SELECT 1 + $1::int", 41).Scan(&n))
	require.Equal(t, 42, n)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, c.QueryRow(ctx, "SELECT 2 + $1::int", 40).Scan(&n))
	require.Equal(t, 42, n)
	b := &pgx.Batch{}
	for i := range 3 {
		b.Queue("SELECT $1::int", i)
	}
	require.NoError(t, c.SendBatch(ctx, b).Close())
	after, err := p.count.snapshot()
	require.NoError(t, err)
	d := after.sub(before)
	assert.EqualValues(t, 1, d.Explicit)
	assert.EqualValues(t, 1, d.Texts["SELECT 1 + $1::int"])
	assert.EqualValues(t, 1, d.Texts["SELECT 2 + $1::int"])
	assert.EqualValues(t, 3, d.Texts["SELECT $1::int"])
	assert.EqualValues(t, 0, d.Errors)
	// begin, commit, and each query and the batch with or without a
	// round trip of its own to prepare.
	assert.GreaterOrEqual(t, d.RoundTrips, int64(5))
	assert.LessOrEqual(t, d.RoundTrips, int64(8))
}
