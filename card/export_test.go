package card

import "github.com/agentstepup/asu/canon"

// RenderUnshared is RenderSealed without the renderer's memory of repeated
// strings: every string is shown and analysed where it stands. Tests
// compare the two.
func RenderUnshared(s canon.Sealed, ctx Context) (*Card, error) {
	return Renderer{}.render(s, ctx, false)
}

// The views' budgets, in bytes per byte the card was drawn from, and
// the budget's floor, for the tests that hold the views to them.
const (
	HTMLPerSource = htmlPerSource
	TextPerSource = textPerSource
	ViewMinBytes  = viewMinBytes
)

// TextEstimate is the text view's estimate of its own length at width
// columns, before any of it is written.
func TextEstimate(c *Card, width int) int { return textEstimate(c, width) }

// HTMLEstimate is the HTML view's estimate of its own length, before any
// of it is written.
func HTMLEstimate(c *Card) int { return htmlEstimate(c) }

// WalkedEstimates are both views' estimates of c counted by walking its
// arguments, as for a card the render did not count.
func WalkedEstimates(c *Card, width int) (text, html int) {
	walked := *c
	walked.m.counted = false
	return textEstimate(&walked, width), htmlEstimate(&walked)
}
