package chunked

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSameAsOneBuilder: written in pieces of all sizes, some written
// again from ranges that span chunks, a chunked builder holds what one builder
// holds, at every step.
func TestSameAsOneBuilder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 4 {
		var b Builder
		var want strings.Builder
		if round%2 == 1 {
			b.Grow(100) // a first chunk far too small
		}
		for want.Len() < 6*minChunk {
			switch k := r.IntN(10); {
			case k < 6:
				s := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3*minChunk/2*(r.IntN(20)/19)+200))
				b.WriteString(s)
				want.WriteString(s)
			case k < 7:
				b.WriteByte('\n')
				want.WriteByte('\n')
			case k < 9 && want.Len() > 0:
				start := r.IntN(want.Len())
				end := start + r.IntN(want.Len()-start+1)
				b.Again(start, end)
				want.WriteString(want.String()[start:end])
			case want.Len() > 0:
				start := r.IntN(want.Len())
				require.Equal(t, want.String()[start:], b.Since(start))
			}
			require.Equal(t, want.Len(), b.Len())
		}
		assert.Equal(t, want.String(), b.String())
		assert.Greater(t, len(b.done), 1, "the test wrote across chunks")
	}
}

// TestCountOnlyCountsWhatIsWritten: a builder set to count reports, at
// every step of generated writes (strings, bytes, byte slices, ranges
// written again, growth), the length a builder that keeps the text
// reports, and keeps nothing.
func TestCountOnlyCountsWhatIsWritten(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		var keep, count Builder
		count.CountOnly()
		for keep.Len() < 3*minChunk {
			switch k := r.IntN(10); {
			case k < 5:
				s := strings.Repeat("x", r.IntN(minChunk/4))
				keep.WriteString(s)
				count.WriteString(s)
			case k < 6:
				_ = keep.WriteByte('y')
				_ = count.WriteByte('y')
			case k < 7:
				p := make([]byte, r.IntN(300))
				_, _ = keep.Write(p)
				_, _ = count.Write(p)
			case k < 8:
				n := r.IntN(2 * minChunk)
				keep.Grow(n)
				count.Grow(n)
			case keep.Len() > 0:
				start := r.IntN(keep.Len())
				end := start + r.IntN(keep.Len()-start+1)
				keep.Again(start, end)
				count.Again(start, end)
			}
			require.Equal(t, keep.Len(), count.Len())
		}
		assert.Empty(t, count.String())
		assert.Empty(t, count.Since(0))
		assert.Nil(t, count.buf, "a counting builder takes no room")
	}
}
