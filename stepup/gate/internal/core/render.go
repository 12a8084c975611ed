package core

import (
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// DefaultRenderer is package card's renderer.
type DefaultRenderer struct{}

func (DefaultRenderer) Render(e canon.Sealed, c card.Context) (*card.Card, error) {
	return card.Render(e.Effect(), c)
}
