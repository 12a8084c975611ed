package core

import (
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// DefaultRenderer is package card's renderer, from the sealed effect as it
// is: the arguments are not canonicalized or parsed again.
type DefaultRenderer struct{}

// Render implements plug.Renderer.
func (DefaultRenderer) Render(e canon.Sealed, c card.Context) (*card.Card, error) {
	return card.RenderSealed(e, c)
}
