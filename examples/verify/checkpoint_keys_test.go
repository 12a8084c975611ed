package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/stepup/keyring"
)

// TestAuditCheckpointWithKeyRing: a checkpoint signed by a ring key, named
// by its id, verifies against the ring's public file after the ring
// rotated, while the old key's grace runs at the verifier's clock, and
// not after; --gate-key takes the ring file as it takes a PEM key.
func TestAuditCheckpointWithKeyRing(t *testing.T) {
	chain := audittest.Chain(30, approvedAt)
	ring, err := keyring.Single(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	k := ring.Current()
	cp := audit.CheckpointOf(chain[9])
	sig, err := audit.SignCheckpoint(k.Ed25519(), cp)
	require.NoError(t, err)
	at10 := writeCheckpoint(t, audit.SignedCheckpoint{Checkpoint: cp, Sig: sig, KeyID: k.ID})
	ring, _, err = ring.Rotate(bytes.Repeat([]byte{2}, 32), approvedAt, time.Hour)
	require.NoError(t, err)
	pub := filepath.Join(t.TempDir(), "keys.pub")
	require.NoError(t, os.WriteFile(pub, keyring.EncodePublic(ring.Public()), 0o600))
	f := writeChain(t, chain[10:])

	code, out, _ := runCLI(approvedAt.Add(30*time.Minute), "audit", f, "--checkpoint", at10, "--gate-key", pub)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "continuing the signed checkpoint at seq 10")

	code, out, _ = runCLI(approvedAt.Add(time.Hour), "audit", f, "--checkpoint", at10, "--gate-key", pub)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "invalid")

	bad := filepath.Join(t.TempDir(), "bad.pub")
	require.NoError(t, os.WriteFile(bad, []byte("a current ed25519:00\n"), 0o600))
	code, _, errOut := runCLI(approvedAt, "audit", f, "--checkpoint", at10, "--gate-key", bad)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, bad+":1: field public-key")
}
