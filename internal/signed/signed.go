// Package signed holds the sentinels of the HMAC-signed requests asu
// sends and its receivers check (package notify's webhook, package
// httpexec's tool requests), so that each meaning has one error value.
package signed

import "errors"

var (
	// ErrSecret means a shared secret is shorter than 32 bytes.
	ErrSecret = errors.New("asu: shared secret shorter than 32 bytes")
	// ErrBadSignature means no signature a request carries is the HMAC of
	// its signed string under the secret.
	ErrBadSignature = errors.New("asu: bad signature")
	// ErrStale means a request's signed timestamp is outside the replay
	// window, in either direction.
	ErrStale = errors.New("asu: signed timestamp outside the replay window")
	// ErrResponseTooLarge means an answer was longer than the reader's
	// bound; it was not read further.
	ErrResponseTooLarge = errors.New("asu: response too large")
)
