// Package ticketstore holds what the gate and a separate executor share
// about tickets in the store: how store refusals map to the runtime's
// sentinels, how idempotency keys are made, and the stored result's shape.
package ticketstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// Err maps a store refusal to the runtime's sentinels, keeping the
// store's message for the detail.
func Err(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s: %w", op, stepup.ErrNotFound)
	case errors.Is(err, store.ErrConsumed):
		return fmt.Errorf("%s: %w", op, stepup.ErrConsumed)
	case errors.Is(err, store.ErrExpired):
		return fmt.Errorf("%s: %w", op, stepup.ErrExpired)
	case errors.Is(err, store.ErrResolved):
		return fmt.Errorf("%s: %w", op, stepup.ErrResolved)
	case errors.Is(err, store.ErrNotApproved):
		return fmt.Errorf("%s: %w", op, stepup.ErrNotApproved)
	case errors.Is(err, store.ErrRevoked):
		return fmt.Errorf("%s: %w", op, stepup.ErrRevoked)
	default:
		return fmt.Errorf("%s: %w: %v", op, stepup.ErrStore, err)
	}
}

// NewKey returns a fresh idempotency key: 128 bits from crypto/rand.
func NewKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("idempotency key: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Result is what a finished execution records in the store.
type Result struct {
	OK     bool            `json:"ok"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}
