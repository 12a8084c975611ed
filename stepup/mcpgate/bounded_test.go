package mcpgate

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunky reads at most a random number of bytes at a time, so that line
// ends and blank lines fall across reads.
type chunky struct {
	r   io.Reader
	rng *rand.Rand
}

func (c chunky) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1+c.rng.IntN(len(p))]
	}
	return c.r.Read(p)
}

// lineEnds are the line ends of an event stream.
var lineEnds = []string{"\n", "\r", "\r\n"}

// genEvent writes one event of an event stream of at most size bytes
// (at least 4) with its blank line: one or more lines of text, each ended
// by "\n", then one more line end.
func genEvent(rng *rand.Rand, size int) string {
	var b strings.Builder
	last := lineEnds[rng.IntN(len(lineEnds))]
	for b.Len() == 0 || b.Len()+len(last)+2 < size {
		n := max(1, min(1+rng.IntN(40), size-b.Len()-len(last)-2))
		b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), n))
		b.WriteString("\n") // one line end: a line of the same event
		if rng.IntN(3) == 0 {
			break
		}
	}
	b.WriteString(last)
	return b.String()
}

func readAllLimited(rng *rand.Rand, body string, max int64, events bool) ([]byte, error) {
	f := &frameLimit{rc: io.NopCloser(chunky{strings.NewReader(body), rng}), max: max, events: events}
	return io.ReadAll(f)
}

// TestFrameLimitPassesStreamsOfSmallEvents: an event stream of any
// length, whose every event is within the bound, reads through whole,
// however its line ends are spelled and however the reads split it.
func TestFrameLimitPassesStreamsOfSmallEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		max := int64(8 + rng.IntN(200))
		var stream strings.Builder
		for range 1 + rng.IntN(30) {
			stream.WriteString(genEvent(rng, 4+rng.IntN(int(max)-3)))
		}
		got, err := readAllLimited(rng, stream.String(), max, true)
		require.NoError(t, err, "max %d, stream %q", max, stream.String())
		require.Equal(t, stream.String(), string(got))
	}
}

// TestFrameLimitStopsAnEventOverTheBound: one event over the bound,
// wherever it sits in the stream, fails the read with ErrOutputTooLarge
// before more than the bound of it is read.
func TestFrameLimitStopsAnEventOverTheBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		max := int64(8 + rng.IntN(200))
		var before strings.Builder
		for range rng.IntN(5) {
			before.WriteString(genEvent(rng, 4+rng.IntN(int(max)-3)))
		}
		// A big event: lines, single line ends, and no blank line.
		var big strings.Builder
		for int64(big.Len()) <= max+int64(rng.IntN(3000)) {
			big.WriteString(strings.Repeat("x", 1+rng.IntN(30)))
			big.WriteString(lineEnds[rng.IntN(len(lineEnds))])
			big.WriteString("y") // never two line ends in a row
		}
		stream := before.String() + big.String() + "\n\n" + genEvent(rng, int(max))
		got, err := readAllLimited(rng, stream, max, true)
		require.ErrorIs(t, err, ErrOutputTooLarge, "max %d", max)
		assert.LessOrEqual(t, int64(len(got)), int64(before.Len())+max, "read no further than the bound")
		assert.Equal(t, stream[:len(got)], string(got))
	}
}

// TestFrameLimitBoundsAWholeBody: a body that is not an event stream is
// one message: up to the bound it reads whole, one byte more fails.
func TestFrameLimitBoundsAWholeBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		max := int64(1 + rng.IntN(5000))
		body := strings.Repeat("\n\n{}", int(max))[:max] // blank lines do not split a JSON body
		got, err := readAllLimited(rng, body, max, false)
		require.NoError(t, err)
		require.Equal(t, body, string(got))
		_, err = readAllLimited(rng, body+"x", max, false)
		require.ErrorIs(t, err, ErrOutputTooLarge)
	}
}

// TestHTTPUpstreamAnswerOverTheBoundIsRefused: an upstream whose first
// answer is larger than MaxFrameBytes fails Connect, and the gateway
// stops reading it: the server cannot write much past the bound.
func TestHTTPUpstreamAnswerOverTheBoundIsRefused(t *testing.T) {
	written := make(chan int64, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		var n int64
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"`))
		for n < 4*MaxFrameBytes {
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				break
			}
		}
		written <- n
	}))
	t.Cleanup(srv.Close)
	_, err := Connect(context.Background(), HTTP(srv.URL, nil), nil)
	require.Error(t, err)
	n := <-written
	assert.Less(t, n, int64(4*MaxFrameBytes), "the server could not write all it wanted: the client stopped reading")
}

// messageSizes splits an event stream the plain way: into line-end tokens
// ("\r\n", "\r", "\n") and other bytes; a message ends with the second of
// two line ends in a row. It returns each message's size in bytes.
func messageSizes(s string) []int64 {
	var sizes []int64
	var n int64
	ends := 0
	for i := 0; i < len(s); {
		tok := 1
		switch {
		case strings.HasPrefix(s[i:], "\r\n"):
			tok = 2
			ends++
		case s[i] == '\r' || s[i] == '\n':
			ends++
		default:
			ends = 0
		}
		n += int64(tok)
		i += tok
		if ends == 2 {
			sizes = append(sizes, n)
			n, ends = 0, 0
		}
	}
	return append(sizes, n)
}

// FuzzFrameLimit holds frameLimit to the plain split: a stream reads
// whole exactly when no message is over the bound, and otherwise fails
// with ErrOutputTooLarge having returned a prefix of it.
func FuzzFrameLimit(f *testing.F) {
	f.Add([]byte("data: x\n\ndata: y\r\n\r\n"), uint16(8), true, uint64(1))
	f.Add([]byte("\r\n\r\r\n\n"), uint16(1), true, uint64(2))
	f.Add([]byte(`{"jsonrpc":"2.0"}`), uint16(10), false, uint64(3))
	f.Fuzz(func(t *testing.T, body []byte, max16 uint16, events bool, seed uint64) {
		max := int64(max16%512) + 1
		got, err := readAllLimited(rand.New(rand.NewPCG(seed, 0)), string(body), max, events)
		over := int64(len(body)) > max
		if events {
			over = false
			for _, n := range messageSizes(string(body)) {
				if n > max {
					over = true
				}
			}
		}
		if !over {
			require.NoError(t, err)
			require.Equal(t, body, got)
			return
		}
		require.ErrorIs(t, err, ErrOutputTooLarge)
		require.True(t, bytes.HasPrefix(body, got))
	})
}
