// Package ticketstore holds what the gate and a separate executor share
// about tickets in the store: how store refusals map to the runtime's
// sentinels, and the stored result's shape.
package ticketstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Err words a store's error for the runtime: a refusal the runtime's
// sentinels name (the store's are the same values) keeps only that
// sentinel; any other store error is [stepup.ErrStore], its detail as
// text, never wrapped, so that nothing of the store's is matched by
// errors.Is beyond it.
func Err(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, s := range runtimeRefusals {
		if errors.Is(err, s) {
			return fmt.Errorf("%s: %w", op, s)
		}
	}
	return fmt.Errorf("%s: %w: %v", op, stepup.ErrStore, err)
}

// runtimeRefusals are the store's refusals a runtime tells apart.
var runtimeRefusals = []error{store.ErrNotFound, store.ErrConsumed, store.ErrExpired, store.ErrResolved,
	store.ErrNotApproved, store.ErrRevoked}

// Result is what a finished execution records in the store.
type Result struct {
	OK     bool            `json:"ok"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}
