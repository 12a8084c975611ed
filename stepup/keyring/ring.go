package keyring

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// Sizes and bounds of keys and rings.
const (
	// MinSecretSize is the shortest secret a key may have.
	MinSecretSize = 32
	// MaxSecretSize is the longest secret a key may have.
	MaxSecretSize = 512
	// MaxIDSize is the longest key id.
	MaxIDSize = 64
	// MaxKeys is the most keys one ring holds.
	MaxKeys = 64
)

// idTag separates derived key ids from every other hash of a secret.
const idTag = "asu/v1/key-id\x00"

// seedTag derives an Ed25519 seed from a secret longer than a seed.
const seedTag = "asu/v1/ed25519-seed\x00"

// Errors of rings and of the evidence checked against them.
var (
	// ErrInvalid is wrapped by every refusal of a ring or a key as
	// configured: a short secret, a duplicate id, no current key, ...
	ErrInvalid = errors.New("keyring: invalid key ring")
	// ErrUnknownKey means evidence names a key id the ring does not hold.
	ErrUnknownKey = errors.New("keyring: unknown key")
	// ErrRetired means evidence names a key whose grace has ended; the
	// error is a [*RetiredError].
	ErrRetired = errors.New("keyring: key retired")
	// ErrMismatch means the evidence does not verify under the key it
	// names (or, naming none, under any key in force).
	ErrMismatch = errors.New("keyring: does not verify")
)

// RetiredError is the refusal of evidence made by a key whose grace ended.
type RetiredError struct {
	ID         string    // the key's id
	GraceUntil time.Time // when its grace ended
}

// Error implements error.
func (e *RetiredError) Error() string {
	return fmt.Sprintf("keyring: key %q is retired; its grace ended at %s", e.ID, e.GraceUntil.UTC().Format(time.RFC3339))
}

// Is reports whether target is [ErrRetired].
func (e *RetiredError) Is(target error) bool { return target == ErrRetired }

// State is what a key of a ring may do.
type State uint8

// The states of a key.
const (
	// Current makes new evidence and verifies; one key per ring.
	Current State = iota + 1
	// Verify only verifies, with no end.
	Verify
	// Retired only verifies, until the key's GraceUntil.
	Retired
)

// String returns the state's name in a key file.
func (s State) String() string {
	switch s {
	case Current:
		return "current"
	case Verify:
		return "verify"
	case Retired:
		return "retired"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Key is one key of a ring.
type Key struct {
	// ID names the key in the evidence it makes: 1 to [MaxIDSize] bytes
	// of letters, digits, '.', '_' and '-'.
	ID string
	// Secret is the key itself, [MinSecretSize] to [MaxSecretSize]
	// bytes. Callers must not modify it.
	Secret []byte
	// State is what the key may do.
	State State
	// GraceUntil is when a Retired key stops verifying; zero otherwise.
	GraceUntil time.Time
}

// String shows the key's id and state, never its secret.
func (k Key) String() string {
	if k.State == Retired {
		return fmt.Sprintf("%s (retired until %s)", k.ID, k.GraceUntil.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s (%s)", k.ID, k.State)
}

// GoString is String, so that %#v prints no secret either.
func (k Key) GoString() string { return "keyring.Key{" + k.String() + "}" }

// Verifies reports whether k still verifies at time at.
func (k Key) Verifies(at time.Time) bool {
	return k.State != Retired || at.Before(k.GraceUntil)
}

// Ed25519 returns the Ed25519 private key the secret stands for, for the
// uses that sign (checkpoints, execution tokens): its seed is
// SHA-256("asu/v1/ed25519-seed" ‖ 0x00 ‖ secret), so one ring may also
// MAC and seal without any two uses sharing key material.
func (k Key) Ed25519() ed25519.PrivateKey {
	h := sha256.New()
	h.Write([]byte(seedTag))
	h.Write(k.Secret)
	return ed25519.NewKeyFromSeed(h.Sum(nil))
}

// DefaultID is the id of a key whose file names none: the first 16 hex
// digits of SHA-256("asu/v1/key-id" ‖ 0x00 ‖ secret). Every replica given
// the same secret derives the same id.
func DefaultID(secret []byte) string {
	h := sha256.New()
	h.Write([]byte(idTag))
	h.Write(secret)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Source gives the ring to use now. A [*Ring] is a Source of itself; a
// [*Live] is one whose ring a running service replaces.
type Source interface {
	Ring() *Ring
}

// Ring is an immutable set of keys with exactly one current key. Its
// zero value is not usable; make one with [New], [Single] or [Parse].
type Ring struct {
	keys []Key
	cur  int
}

// New returns the ring of keys. It fails with [ErrInvalid] unless exactly
// one key is Current, ids are unique and well formed, secrets are within
// bounds and distinct, and exactly the Retired keys have a GraceUntil.
func New(keys ...Key) (*Ring, error) {
	if len(keys) == 0 || len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: a ring holds 1 to %d keys, not %d", ErrInvalid, MaxKeys, len(keys))
	}
	r := &Ring{keys: make([]Key, len(keys)), cur: -1}
	for i, k := range keys {
		if err := validKey(k); err != nil {
			return nil, err
		}
		for _, o := range r.keys[:i] {
			if o.ID == k.ID {
				return nil, fmt.Errorf("%w: key id %q appears twice", ErrInvalid, k.ID)
			}
			if subtle.ConstantTimeCompare(o.Secret, k.Secret) == 1 {
				return nil, fmt.Errorf("%w: keys %q and %q have the same secret", ErrInvalid, o.ID, k.ID)
			}
		}
		if k.State == Current {
			if r.cur >= 0 {
				return nil, fmt.Errorf("%w: keys %q and %q are both current", ErrInvalid, r.keys[r.cur].ID, k.ID)
			}
			r.cur = i
		}
		k.Secret = bytes.Clone(k.Secret)
		r.keys[i] = k
	}
	if r.cur < 0 {
		return nil, fmt.Errorf("%w: no key is current", ErrInvalid)
	}
	return r, nil
}

// validKey checks one key on its own.
func validKey(k Key) error {
	if err := ValidID(k.ID); err != nil {
		return err
	}
	if n := len(k.Secret); n < MinSecretSize || n > MaxSecretSize {
		return fmt.Errorf("%w: key %q: secret is %d bytes; it must be %d to %d", ErrInvalid, k.ID, n, MinSecretSize, MaxSecretSize)
	}
	switch k.State {
	case Current, Verify:
		if !k.GraceUntil.IsZero() {
			return fmt.Errorf("%w: key %q is %s but has a grace end; only retired keys have one", ErrInvalid, k.ID, k.State)
		}
	case Retired:
		if k.GraceUntil.IsZero() {
			return fmt.Errorf("%w: retired key %q has no grace end", ErrInvalid, k.ID)
		}
	default:
		return fmt.Errorf("%w: key %q has no state", ErrInvalid, k.ID)
	}
	return nil
}

// ValidID checks a key id: 1 to [MaxIDSize] bytes of ASCII letters,
// digits, '.', '_' and '-'. It fails with [ErrInvalid].
func ValidID(id string) error {
	if id == "" || len(id) > MaxIDSize {
		return fmt.Errorf("%w: a key id is 1 to %d characters", ErrInvalid, MaxIDSize)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: a key id holds only letters, digits, '.', '_' and '-'", ErrInvalid)
		}
	}
	return nil
}

// Single returns a ring of one current key, secret, under its
// [DefaultID]: what a single-key option (gate.WithKey) stands for.
func Single(secret []byte) (*Ring, error) {
	return New(Key{ID: DefaultID(secret), Secret: secret, State: Current})
}

// Ring implements [Source].
func (r *Ring) Ring() *Ring { return r }

// Current returns the key that makes new evidence.
func (r *Ring) Current() Key { return r.keys[r.cur] }

// Keys returns the ring's keys, in file order.
func (r *Ring) Keys() []Key { return slices.Clone(r.keys) }

// Find returns the key id names if it verifies at time at. It fails with
// [ErrUnknownKey], or a [*RetiredError] for a key whose grace has ended.
func (r *Ring) Find(id string, at time.Time) (Key, error) {
	i, err := find(len(r.keys), func(i int) (string, State, time.Time) {
		k := r.keys[i]
		return k.ID, k.State, k.GraceUntil
	}, id, at)
	if err != nil {
		return Key{}, err
	}
	return r.keys[i], nil
}

// Verifying returns the keys that verify at time at, the current one
// first: those evidence without a key id is tried under.
func (r *Ring) Verifying(at time.Time) []Key {
	out := []Key{r.keys[r.cur]}
	for i, k := range r.keys {
		if i != r.cur && k.Verifies(at) {
			out = append(out, k)
		}
	}
	return out
}

// Verify checks evidence against the ring: made by key id (or, when id
// is empty, evidence from before key ids, by any key that verifies at
// time at), it passes if ok accepts it under that key's secret. It
// returns the id of the key that verified it, or fails with
// [ErrUnknownKey], a [*RetiredError], or [ErrMismatch]; each use wraps
// the error in its own bad-evidence sentinel.
func (r *Ring) Verify(id string, at time.Time, ok func(secret []byte) bool) (string, error) {
	if id != "" {
		k, err := r.Find(id, at)
		if err != nil {
			return "", err
		}
		if !ok(k.Secret) {
			return "", fmt.Errorf("%w under key %q", ErrMismatch, k.ID)
		}
		return k.ID, nil
	}
	for _, k := range r.Verifying(at) {
		if ok(k.Secret) {
			return k.ID, nil
		}
	}
	return "", fmt.Errorf("%w: it names no key, and no key in force verifies it", ErrMismatch)
}

// find is the lookup both ring kinds share: the index of the key named
// id, if it verifies at time at.
func find(n int, key func(i int) (string, State, time.Time), id string, at time.Time) (int, error) {
	for i := range n {
		kid, st, until := key(i)
		if subtle.ConstantTimeCompare([]byte(kid), []byte(id)) != 1 {
			continue
		}
		if st == Retired && !at.Before(until) {
			return -1, &RetiredError{ID: kid, GraceUntil: until}
		}
		return i, nil
	}
	if ValidID(id) != nil {
		return -1, fmt.Errorf("%w: the key id is malformed", ErrUnknownKey)
	}
	return -1, fmt.Errorf("%w: %q", ErrUnknownKey, id)
}

// Add returns the ring with secret added as a verify-only key under its
// [DefaultID], and that id: the first step of a rotation, taken on every
// replica before any makes the key current.
func (r *Ring) Add(secret []byte) (*Ring, string, error) {
	id := DefaultID(secret)
	nr, err := New(append(r.Keys(), Key{ID: id, Secret: secret, State: Verify})...)
	if err != nil {
		return nil, "", err
	}
	return nr, id, nil
}

// Promote returns the ring with key id made current and the current key
// retired, verifying until at+grace. Promoting the current key changes
// nothing. It fails with [ErrUnknownKey] for an id the ring does not
// hold, and with [ErrInvalid] for a negative grace or a key already
// retired (add it again rather than revive it).
func (r *Ring) Promote(id string, at time.Time, grace time.Duration) (*Ring, error) {
	if grace < 0 {
		return nil, fmt.Errorf("%w: grace must not be negative", ErrInvalid)
	}
	keys := r.Keys()
	i := slices.IndexFunc(keys, func(k Key) bool { return k.ID == id })
	switch {
	case i < 0:
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, id)
	case i == r.cur:
		return r, nil
	case keys[i].State == Retired:
		return nil, fmt.Errorf("%w: key %q is retired; add a new key instead", ErrInvalid, id)
	}
	keys[r.cur].State, keys[r.cur].GraceUntil = Retired, at.Add(grace)
	keys[i].State = Current
	return New(keys...)
}

// Rotate returns the ring with secret as the new current key and the old
// current key retired until at+grace, and the new key's id: [Ring.Add]
// and [Ring.Promote] in one step, for a single replica (or replicas that
// all read one ring at once).
func (r *Ring) Rotate(secret []byte, at time.Time, grace time.Duration) (*Ring, string, error) {
	nr, id, err := r.Add(secret)
	if err != nil {
		return nil, "", err
	}
	nr, err = nr.Promote(id, at, grace)
	if err != nil {
		return nil, "", err
	}
	return nr, id, nil
}

// Prune returns the ring without the keys whose grace ended by time at.
func (r *Ring) Prune(at time.Time) *Ring {
	keys := slices.DeleteFunc(r.Keys(), func(k Key) bool { return !k.Verifies(at) })
	nr, err := New(keys...)
	if err != nil { // cannot happen: the current key always stays
		return r
	}
	return nr
}

// Live is a [Source] whose ring a running service replaces (a key file
// re-read after a rotation) while requests keep reading it. Its zero
// value is not usable; make one with [NewLive].
type Live struct {
	p atomic.Pointer[Ring]
}

// NewLive returns a Live holding r.
func NewLive(r *Ring) *Live {
	l := &Live{}
	l.p.Store(r)
	return l
}

// Ring implements [Source]: the ring set last.
func (l *Live) Ring() *Ring { return l.p.Load() }

// Set makes r the ring every later Ring call returns; nil is ignored.
func (l *Live) Set(r *Ring) {
	if r != nil {
		l.p.Store(r)
	}
}
