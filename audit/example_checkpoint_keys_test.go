package audit_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

// checkpointRing is the smallest CheckpointKeys: keys by id, none
// retired. A key ring's public half (stepup/keyring) is the full one.
type checkpointRing map[string]ed25519.PublicKey

func (r checkpointRing) Verify(id string, _ time.Time, msg, sig []byte) (string, error) {
	if pub, ok := r[id]; ok && ed25519.Verify(pub, msg, sig) {
		return id, nil
	}
	return "", errors.New("no key of the ring verifies it")
}

// ExampleVerifySignedCheckpoint checks a checkpoint under the key it
// names.
func ExampleVerifySignedCheckpoint() {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	cp := audit.Checkpoint{Seq: 1, Hash: canon.Digest{1}, Time: 1764460800000}
	sig, _ := audit.SignCheckpoint(priv, cp)
	sc := audit.SignedCheckpoint{Checkpoint: cp, Sig: sig, KeyID: "k2"}
	keys := checkpointRing{"k2": priv.Public().(ed25519.PublicKey)}
	fmt.Println(audit.VerifySignedCheckpoint(keys, sc, time.Now()))
	sc.KeyID = "k1"
	fmt.Println(errors.Is(audit.VerifySignedCheckpoint(keys, sc, time.Now()), audit.ErrCheckpoint))
	// Output:
	// <nil>
	// true
}

// ExampleVerifyChainFromKeys verifies an export that continues right
// after a checkpoint signed by a ring key. An export with no records
// shows nothing of the checkpoint, and fails.
func ExampleVerifyChainFromKeys() {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	cp := audit.Checkpoint{Seq: 0, Time: 1764460800000} // the start of the chain
	sig, _ := audit.SignCheckpoint(priv, cp)
	sc := audit.SignedCheckpoint{Checkpoint: cp, Sig: sig, KeyID: "k1"}
	keys := checkpointRing{"k1": priv.Public().(ed25519.PublicKey)}
	records := audittest.Chain(3, time.UnixMilli(cp.Time))
	fmt.Println(audit.VerifyChainFromKeys(records, keys, sc, time.Now()))
	fmt.Println(errors.Is(audit.VerifyChainFromKeys(nil, keys, sc, time.Now()), audit.ErrCheckpoint))
	// Output:
	// <nil>
	// true
}
