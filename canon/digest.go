package canon

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
)

// Digest is the SHA-256 of a canonical effect. It is what an approval binds:
// two calls with the same Digest have the same effect.
type Digest [32]byte

// Sum returns the Digest of already canonical bytes.
func Sum(canonical []byte) Digest { return Digest(sha256.Sum256(canonical)) }

// String returns the digest as 64 lowercase hex characters.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Short returns the first 12 hex characters, a fingerprint for people to
// compare by eye. It never replaces the full digest in a check.
func (d Digest) Short() string { return hex.EncodeToString(d[:6]) }

// IsZero reports whether d is all zero bytes, the value of an unset Digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// Equal reports whether d and o are the same digest, in constant time.
func (d Digest) Equal(o Digest) bool { return subtle.ConstantTimeCompare(d[:], o[:]) == 1 }

// ParseDigest parses 64 hex characters (either case) into a Digest.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return Digest{}, fmt.Errorf("%w: want %d hex characters, got %d", ErrBadDigest, 2*len(d), len(s))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return Digest{}, fmt.Errorf("%w: not hex", ErrBadDigest)
	}
	return d, nil
}

// MarshalText encodes d as 64 lowercase hex characters.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes 64 hex characters into d.
func (d *Digest) UnmarshalText(b []byte) error {
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}
