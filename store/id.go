package store

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns 128 bits from crypto/rand as 32 lowercase hex characters,
// the form of ticket ids. An id is unguessable, so it can appear in an
// approval link.
func NewID() string {
	var b [16]byte
	// crypto/rand.Read never returns an error since Go 1.24; it crashes the
	// program rather than return predictable bytes.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
