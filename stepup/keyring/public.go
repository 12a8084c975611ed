package keyring

import (
	"crypto/ed25519"
	"crypto/subtle"
	"fmt"
	"slices"
	"time"
)

// PublicKey is the public half of a ring key that signs: what a verifier
// outside the gate (an executor checking execution tokens, an auditor
// checking checkpoints) holds instead of the secret.
type PublicKey struct {
	ID         string
	Key        ed25519.PublicKey
	State      State
	GraceUntil time.Time
}

// Verifies reports whether k still verifies at time at.
func (k PublicKey) Verifies(at time.Time) bool {
	return k.State != Retired || at.Before(k.GraceUntil)
}

// PublicSource gives the public ring to use now; a [*PublicRing] is one.
type PublicSource interface {
	PublicRing() *PublicRing
}

// PublicRing is the public half of a [Ring] whose keys sign Ed25519: the
// same ids, states and graces, each with the public key of
// [Key.Ed25519]. It never changes.
type PublicRing struct {
	keys []PublicKey
}

// Public returns the public half of r.
func (r *Ring) Public() *PublicRing {
	p := &PublicRing{keys: make([]PublicKey, len(r.keys))}
	for i, k := range r.keys {
		p.keys[i] = PublicKey{ID: k.ID, Key: k.Ed25519().Public().(ed25519.PublicKey), State: k.State, GraceUntil: k.GraceUntil}
	}
	return p
}

// NewPublic returns the public ring of keys. It fails with [ErrInvalid]
// unless ids are unique and well formed, keys are Ed25519 public keys,
// and exactly the Retired keys have a GraceUntil. A public ring needs no
// current key (it makes nothing), but may mark one.
func NewPublic(keys ...PublicKey) (*PublicRing, error) {
	if len(keys) == 0 || len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: a ring holds 1 to %d keys, not %d", ErrInvalid, MaxKeys, len(keys))
	}
	p := &PublicRing{}
	for _, k := range keys {
		if len(k.Key) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: key %q is not an Ed25519 public key", ErrInvalid, k.ID)
		}
		// The checks of a secret key's id, state and grace; the secret
		// only stands in for its length.
		if err := validKey(Key{ID: k.ID, Secret: make([]byte, MinSecretSize), State: k.State, GraceUntil: k.GraceUntil}); err != nil {
			return nil, err
		}
		for _, o := range p.keys {
			if o.ID == k.ID {
				return nil, fmt.Errorf("%w: key id %q appears twice", ErrInvalid, k.ID)
			}
			if subtle.ConstantTimeCompare(o.Key, k.Key) == 1 {
				return nil, fmt.Errorf("%w: keys %q and %q are the same key", ErrInvalid, o.ID, k.ID)
			}
		}
		k.Key = slices.Clone(k.Key)
		p.keys = append(p.keys, k)
	}
	return p, nil
}

// PublicRing implements [PublicSource].
func (p *PublicRing) PublicRing() *PublicRing { return p }

// Keys returns the ring's keys.
func (p *PublicRing) Keys() []PublicKey { return slices.Clone(p.keys) }

// Find returns the public key id names if it verifies at time at. It
// fails with [ErrUnknownKey], or a [*RetiredError] for a key whose grace
// has ended.
func (p *PublicRing) Find(id string, at time.Time) (ed25519.PublicKey, error) {
	i, err := find(len(p.keys), func(i int) (string, State, time.Time) {
		k := p.keys[i]
		return k.ID, k.State, k.GraceUntil
	}, id, at)
	if err != nil {
		return nil, err
	}
	return p.keys[i].Key, nil
}

// Verifying returns the public keys that verify at time at: those a
// signature without a key id is tried under.
func (p *PublicRing) Verifying(at time.Time) []ed25519.PublicKey {
	var out []ed25519.PublicKey
	for _, k := range p.keys {
		if k.Verifies(at) {
			out = append(out, k.Key)
		}
	}
	return out
}

// Verify checks an Ed25519 signature sig over msg made by key id (or,
// when id is empty, by any key that verifies at time at), and returns the
// id of the key it verified under. It fails as [Ring.Verify] does.
func (p *PublicRing) Verify(id string, at time.Time, msg, sig []byte) (string, error) {
	if id != "" {
		pub, err := p.Find(id, at)
		if err != nil {
			return "", err
		}
		if !ed25519.Verify(pub, msg, sig) {
			return "", fmt.Errorf("%w under key %q", ErrMismatch, id)
		}
		return id, nil
	}
	for _, k := range p.keys {
		if k.Verifies(at) && ed25519.Verify(k.Key, msg, sig) {
			return k.ID, nil
		}
	}
	return "", fmt.Errorf("%w: it names no key, and no key in force verifies it", ErrMismatch)
}
