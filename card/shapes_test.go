package card_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// Stated bounds on the size of the views, as multiples of the canonical
// effect, for every shape (BenchmarkRenderShapes reports the figures).
// The HTML of lists and objects of tiny values was 31 to 45 times the
// effect when every item's key and value had a classed span of its own;
// in the short tree markup it is 10 to 26.
const (
	maxHTMLPerEffect = 28
	maxTextPerEffect = 16
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRenderWorkGrowsLinearly: for every adversarial shape, rendering and
// both views at 1 MiB allocate at most 20 times what they allocate at 64
// KiB (16 times the size), and the views stay within their stated
// multiples of the effect. Allocation stands in for time, which a test
// does not assert: every step of rendering writes what it allocates.
func TestRenderWorkGrowsLinearly(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("renders 14 effects of up to 1 MiB")
	}
	ctx := injectivityContext()
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) {
			var work [2]uint64
			for i, size := range []int{64 << 10, 1 << 20} {
				s, err := canon.Seal(effectWith(shapeArgs(shape, size-8<<10)))
				require.NoError(t, err)
				var c *card.Card
				work[i] = allocated(func() {
					c, err = card.RenderSealed(s, ctx)
					if err == nil {
						_, _ = c.Text(), c.HTML()
					}
				})
				if err != nil {
					continue // refused: no view to bound
				}
				assert.LessOrEqual(t, len(c.HTML()), maxHTMLPerEffect*s.Len(), "HTML of %d bytes", s.Len())
				assert.LessOrEqual(t, len(c.Text()), maxTextPerEffect*s.Len(), "text of %d bytes", s.Len())
			}
			assert.LessOrEqual(t, work[1], 20*work[0], "64 KiB: %d bytes, 1 MiB: %d bytes", work[0], work[1])
		})
	}
}
