package passkey

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

// MinSealKeySize is the shortest key [WithSealKey] and [RequireSeal]
// accept.
const MinSealKeySize = 32

// sealLabel separates credential seals from every other MAC made with the
// same key.
const sealLabel = "asu/v1/credential\x00"

// sealMACSize is the size of a seal's MAC; the key id follows it.
const sealMACSize = sha256.Size

// sealKey is the ring credentials are sealed with, and the clock its
// retired keys' graces are judged by; nil means no sealing.
//
// A seal, as stored in [store.Credential].Seal, is the MAC followed by the
// id of the key that made it: mac[32] ‖ id. A seal of exactly 32 bytes
// was made before key ids; it verifies under any key still in force.
type sealKey = *sealer

type sealer struct {
	keys  keyring.Source
	clock store.Clock // nil only for a ring that never retires a key
}

func newSealKey(key []byte) (*sealer, error) {
	if len(key) < MinSealKeySize {
		return nil, fmt.Errorf("%w: seal key must be at least %d bytes", stepup.ErrConfig, MinSealKeySize)
	}
	r, err := keyring.Single(key)
	if err != nil {
		return nil, fmt.Errorf("%w: seal key: %v", stepup.ErrConfig, err)
	}
	return &sealer{keys: r}, nil
}

func newSealRing(keys keyring.Source, clock store.Clock) (*sealer, error) {
	if keys == nil || keys.Ring() == nil || clock == nil {
		return nil, fmt.Errorf("%w: a seal key ring needs its keys and the store's clock", stepup.ErrConfig)
	}
	return &sealer{keys: keys, clock: clock}, nil
}

// sealWith is the MAC over what makes c approve: its id, its user and
// its public key, each length-prefixed so no two credentials share an
// input.
func sealWith(secret []byte, c store.Credential) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(sealLabel))
	for _, f := range [][]byte{c.ID, []byte(c.User), c.PublicKey} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write(f)
	}
	return m.Sum(nil)
}

// seal returns c's seal under the ring's current key, with its id.
func (s *sealer) seal(c store.Credential) []byte {
	k := s.keys.Ring().Current()
	return append(sealWith(k.Secret, c), k.ID...)
}

// errUnsealed is why a credential without a seal in force is refused.
var errUnsealed = fmt.Errorf("%w: the credential carries no seal of this enrollment", ErrUnknownCredential)

// sealed checks that c carries a seal of a key in force; every credential
// is sealed when s is nil (the approver was not asked to check). It fails
// with [ErrUnknownCredential] (and, for a key retired past its grace,
// [keyring.ErrRetired] naming it), or with stepup.ErrStore when the
// store's clock cannot be read.
func (s *sealer) sealed(ctx context.Context, c store.Credential) error {
	if s == nil {
		return nil
	}
	if len(c.Seal) < sealMACSize {
		return errUnsealed
	}
	mac, id := c.Seal[:sealMACSize], string(c.Seal[sealMACSize:])
	r := s.keys.Ring()
	var at time.Time
	if s.clock != nil && retires(r) { // graces are judged by the store's clock, read only when one runs
		now, err := s.clock.Now(ctx)
		if err != nil {
			return ticketstore.Err("credential seal: the store's clock", err)
		}
		at = now
	}
	if _, err := r.Verify(id, at, func(secret []byte) bool { return hmac.Equal(mac, sealWith(secret, c)) }); err != nil {
		if errors.Is(err, keyring.ErrRetired) || errors.Is(err, keyring.ErrUnknownKey) {
			return fmt.Errorf("%w: %w", errUnsealed, err)
		}
		return errUnsealed
	}
	return nil
}

// retires reports whether r holds a retired key, the only kind whose
// verdict depends on the time.
func retires(r *keyring.Ring) bool {
	for _, k := range r.Keys() {
		if k.State == keyring.Retired {
			return true
		}
	}
	return false
}

// WithSealKey has the enrollment seal every credential it enrolls with
// key (at least [MinSealKeySize] bytes): a MAC over the credential's id,
// user and public key, stored with it. An [Approver] given the same key
// with [RequireSeal] refuses any credential without that seal, so a row
// written into the credential table by anyone who does not hold the key
// (a database writer, a restored backup from another deployment) never
// approves. Keep the key outside the database. The gate's own key
// (gate.WithKey) may serve: seals are labelled apart from the gate's MACs.
// WithSealKey(k) is a ring of one key, k, under its [keyring.DefaultID];
// [WithSealKeyRing] lets the key rotate.
//
// A seal proves that this deployment enrolled the credential, not that it
// is still in force: a database writer can clear a revocation or restore
// an older table. Signed audit checkpoints (receipt) show such a rollback
// after the fact.
func WithSealKey(key []byte) EnrollOption {
	return func(e *Enrollment) error {
		k, err := newSealKey(key)
		if err != nil {
			return err
		}
		e.seal = k
		return nil
	}
}

// WithSealKeyRing has the enrollment seal every credential it enrolls
// with the current key of keys, recording the key's id in the seal, as
// [WithSealKey] does with one key. keys is read at each enrollment, so a
// [*keyring.Live] rotates a running service.
func WithSealKeyRing(keys keyring.Source) EnrollOption {
	return func(e *Enrollment) error {
		if keys == nil || keys.Ring() == nil {
			return fmt.Errorf("%w: nil seal key ring", stepup.ErrConfig)
		}
		e.seal = &sealer{keys: keys}
		return nil
	}
}

// Option configures an [Approver].
type Option func(*Approver) error

// RequireSeal has the approver refuse, when it verifies an answer and
// when it rechecks a stored approval, every credential that does not
// carry the seal an [Enrollment] made with [WithSealKey] and the same key.
// Credentials enrolled without the key are refused too: enroll them again.
func RequireSeal(key []byte) Option {
	return func(w *Approver) error {
		k, err := newSealKey(key)
		if err != nil {
			return err
		}
		w.seal = k
		return nil
	}
}

// RequireSealKeyRing is [RequireSeal] for a ring that rotates: a
// credential passes if its seal verifies under the key it names (a seal
// made before key ids: under any key in force) as that key stands at
// clock's time (the store's clock, which every replica shares). A
// credential sealed by a key retired past its grace is refused with
// [ErrUnknownCredential], the error naming the key.
//
// Credentials stay sealed by the key that enrolled them: keep a seal key
// in the ring, current or verify-only, for as long as passkeys it sealed
// are to approve, and retire it only when they have been enrolled again.
func RequireSealKeyRing(keys keyring.Source, clock store.Clock) Option {
	return func(w *Approver) error {
		k, err := newSealRing(keys, clock)
		if err != nil {
			return err
		}
		w.seal = k
		return nil
	}
}
