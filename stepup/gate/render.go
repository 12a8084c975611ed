package gate

import (
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// Renderer renders the approval card of a sealed effect from trusted
// context only. A localized or branded renderer plugs in with
// [WithRenderer]; card.Renderer is the default. The card's hash covers
// the renderer's identity and is signed in the approval challenge, so
// what the approver saw is what the passkey signed.
type Renderer interface {
	Render(e canon.Sealed, c card.Context) (*card.Card, error)
}

// defaultRenderer is package card's renderer.
type defaultRenderer struct{}

func (defaultRenderer) Render(e canon.Sealed, c card.Context) (*card.Card, error) {
	return card.Render(e.Effect(), c)
}
