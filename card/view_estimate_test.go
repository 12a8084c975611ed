package card_test

import (
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// TestViewEstimatesNearTheViews holds the estimate each view makes of its
// own length, the room it is written into, to the length it has: for
// every adversarial shape, at both sizes the shapes are measured at, the
// room (nine eighths of the estimate, and 4 KiB for the HTML) holds the
// view, and is not so much larger than the view that it would be copied
// to a string of its own size at the end.
func TestViewEstimatesNearTheViews(t *testing.T) {
	for _, shape := range shapes {
		for _, size := range []int{64 << 10, canon.DefaultMaxBytes - 64<<10} {
			sealed, err := canon.Seal(effectWith(shapeArgs(shape, size)))
			if err != nil {
				t.Fatalf("%s: %v", shape, err)
			}
			c, err := card.RenderSealed(sealed, injectivityContext())
			if err != nil {
				t.Fatalf("%s: %v", shape, err)
			}
			n, room := len(c.Text()), card.TextEstimate(c, card.DefaultWidth)*9/8
			if room < n || room > n+n/4+4096 {
				t.Errorf("%s at %d bytes: the text view is %d bytes, its room %d (%.2f times)", shape, size, n, room, float64(room)/float64(n))
			}
			n, room = len(c.HTML()), card.HTMLEstimate(c)*9/8+4096
			if room < n || room > n+n/4+4096 {
				t.Errorf("%s at %d bytes: the HTML view is %d bytes, its room %d (%.2f times)", shape, size, n, room, float64(room)/float64(n))
			}
		}
	}
}
