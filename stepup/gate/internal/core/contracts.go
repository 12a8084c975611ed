package core

import (
	"context"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// The contracts whose values belong to heavier packages than plug. Package
// gate declares and documents each (gate.Renderer, gate.Flood,
// gate.Receipter); these have the same method sets, so a value of one is
// a value of the other.
type (
	// Renderer is gate.Renderer.
	Renderer interface {
		RenderSealed(s canon.Sealed, c card.Context) (*card.Card, error)
	}
	// Flood is gate.Flood.
	Flood interface {
		Admit(ctx context.Context, r flood.Request) error
		Decided(ctx context.Context, r flood.Request, approved bool) error
		Caps() store.Caps
	}
	// Receipter is gate.Receipter.
	Receipter interface {
		Receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, error)
	}
)
