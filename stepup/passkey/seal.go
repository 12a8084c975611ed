package passkey

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// MinSealKeySize is the shortest key [WithSealKey] and [RequireSeal]
// accept.
const MinSealKeySize = 32

// sealLabel separates credential seals from every other MAC made with the
// same key.
const sealLabel = "asu/v1/credential\x00"

// sealKey is the key credentials are sealed with; nil means no sealing.
type sealKey []byte

func newSealKey(key []byte) (sealKey, error) {
	if len(key) < MinSealKeySize {
		return nil, fmt.Errorf("%w: seal key must be at least %d bytes", stepup.ErrConfig, MinSealKeySize)
	}
	return sealKey(bytes.Clone(key)), nil
}

// seal is the MAC over what makes c approve: its id, its user and its
// public key, each length-prefixed so no two credentials share an input.
func (k sealKey) seal(c store.Credential) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(sealLabel))
	for _, f := range [][]byte{c.ID, []byte(c.User), c.PublicKey} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write(f)
	}
	return m.Sum(nil)
}

// sealed reports whether c carries k's seal; every credential is sealed
// when k is nil (the approver was not asked to check).
func (k sealKey) sealed(c store.Credential) bool {
	return k == nil || hmac.Equal(c.Seal, k.seal(c))
}

// WithSealKey has the enrollment seal every credential it enrolls with
// key (at least [MinSealKeySize] bytes): a MAC over the credential's id,
// user and public key, stored with it. An [Approver] given the same key
// with [RequireSeal] refuses any credential without that seal, so a row
// written into the credential table by anyone who does not hold the key
// (a database writer, a restored backup from another deployment) never
// approves. Keep the key outside the database. The gate's own key
// (gate.WithKey) may serve: seals are labelled apart from the gate's MACs.
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
