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

// TestCountedEstimatesAreTheWalked holds the views' estimates the render
// counts as it builds the model to those a walk of the finished model
// makes: for every adversarial shape, and for the cards of the
// injectivity corpus (strings of every script, marks, hosts, long
// values, nesting, labels and units), at the default width.
func TestCountedEstimatesAreTheWalked(t *testing.T) {
	check := func(name string, c *card.Card) {
		t.Helper()
		text, html := card.WalkedEstimates(c, card.DefaultWidth)
		if got := card.TextEstimate(c, card.DefaultWidth); got != text {
			t.Errorf("%s: text estimate counted %d, walked %d", name, got, text)
		}
		if got := card.HTMLEstimate(c); got != html {
			t.Errorf("%s: HTML estimate counted %d, walked %d", name, got, html)
		}
	}
	for _, shape := range shapes {
		sealed, err := canon.Seal(effectWith(shapeArgs(shape, 8<<10)))
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		c, err := card.RenderSealed(sealed, injectivityContext())
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		check(shape, c)
	}
	n := 0
	for _, p := range corpus() {
		for _, e := range []canon.Effect{p.a, p.b} {
			c, err := card.Render(e, injectivityContext())
			if err != nil {
				continue
			}
			check(p.class, c)
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d corpus cards rendered", n)
	}
}
