package audit_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// ringKeys is a two-key ring stand-in: keys by id, one retired at a
// grace end. (The keyring package implements the same interface; audit
// imports only canon.)
type ringKeys struct {
	keys  map[string]ed25519.PublicKey
	until map[string]time.Time
}

func (r ringKeys) Verify(id string, at time.Time, msg, sig []byte) (string, error) {
	try := func(id string) error {
		pub, ok := r.keys[id]
		if !ok {
			return errors.New("unknown key")
		}
		if u, ok := r.until[id]; ok && !at.Before(u) {
			return fmt.Errorf("key %q is retired", id)
		}
		if !ed25519.Verify(pub, msg, sig) {
			return errors.New("does not verify")
		}
		return nil
	}
	if id != "" {
		return id, try(id)
	}
	for k := range r.keys {
		if try(k) == nil {
			return k, nil
		}
	}
	return "", errors.New("no key verifies")
}

// TestCheckpointNamesItsKey: a checkpoint signed by a ring key names it,
// round-trips through its file, verifies under that key while it is in
// force and not after, and a checkpoint without a key id (before key ids)
// verifies under any key in force.
func TestCheckpointNamesItsKey(t *testing.T) {
	oldPriv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	newPriv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	keys := ringKeys{
		keys:  map[string]ed25519.PublicKey{"old": oldPriv.Public().(ed25519.PublicKey), "new": newPriv.Public().(ed25519.PublicKey)},
		until: map[string]time.Time{"old": t0.Add(time.Hour)},
	}
	cp := audit.Checkpoint{Seq: 3, Hash: canon.Digest{1}, Time: 1}
	sig, err := audit.SignCheckpoint(oldPriv, cp)
	require.NoError(t, err)
	sc := audit.SignedCheckpoint{Checkpoint: cp, Sig: sig, KeyID: "old"}
	raw, err := json.Marshal(sc)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"kid":"old"`)
	parsed, err := audit.ParseSignedCheckpoint(raw)
	require.NoError(t, err)
	require.Equal(t, sc, parsed)

	require.NoError(t, audit.VerifySignedCheckpoint(keys, parsed, t0))
	err = audit.VerifySignedCheckpoint(keys, parsed, t0.Add(time.Hour))
	require.ErrorIs(t, err, audit.ErrCheckpoint)
	assert.Contains(t, err.Error(), `"old" is retired`)

	legacy := parsed
	legacy.KeyID = ""
	require.NoError(t, audit.VerifySignedCheckpoint(keys, legacy, t0))
	require.ErrorIs(t, audit.VerifySignedCheckpoint(keys, legacy, t0.Add(time.Hour)), audit.ErrCheckpoint)

	swapped := parsed
	swapped.KeyID = "new"
	require.ErrorIs(t, audit.VerifySignedCheckpoint(keys, swapped, t0), audit.ErrCheckpoint)
	// The single-key verifier ignores the id: the signature decides.
	require.NoError(t, audit.VerifyCheckpoint(keys.keys["old"], swapped.Checkpoint, swapped.Sig))
}
