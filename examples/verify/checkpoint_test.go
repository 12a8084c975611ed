package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
)

// writeGateKey writes key's public half as a PEM file.
func writeGateKey(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "gate.pem")
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))
	return p
}

func writeCheckpoint(t *testing.T, sc audit.SignedCheckpoint) string {
	t.Helper()
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "checkpoint.json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// TestAuditCheckpoint: a chain that does not start at the first record
// verifies only with a checkpoint the gate signed, at the record right
// before it; every other cut, checkpoint or key fails with exit 1.
func TestAuditCheckpoint(t *testing.T) {
	gate := audittest.GateKey(1)
	chain := audittest.Chain(30, approvedAt)
	key := writeGateKey(t, gate)
	at10 := writeCheckpoint(t, audittest.SignedCheckpoint(gate, chain[9]))
	head := chain[29].Hash.String()

	code, out, _ := runCLI(approvedAt, "audit", writeChain(t, chain[10:]), "--checkpoint", at10, "--gate-key", key)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "valid: 20 records, seq 11-30 continuing the signed checkpoint at seq 10; head "+head+"\n", out)

	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain), "--checkpoint", at10, "--gate-key", key, "--json")
	assert.Equal(t, 0, code, out)
	var rep struct {
		Valid      bool    `json:"valid"`
		Checkpoint *uint64 `json:"checkpoint"`
		Genesis    bool    `json:"from_genesis"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Valid && rep.Genesis)
	require.NotNil(t, rep.Checkpoint)
	assert.Equal(t, uint64(10), *rep.Checkpoint)

	for start := 1; start < 30; start++ {
		if start == 10 {
			continue
		}
		code, out, _ := runCLI(approvedAt, "audit", writeChain(t, chain[start:]), "--checkpoint", at10, "--gate-key", key)
		assert.Equal(t, 1, code, "chain from index %d: %s", start, out)
	}

	otherKey := writeGateKey(t, audittest.GateKey(2))
	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain[10:]), "--checkpoint", at10, "--gate-key", otherKey)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "checkpoint does not verify")

	forged := audittest.SignedCheckpoint(audittest.GateKey(2), chain[9])
	code, _, _ = runCLI(approvedAt, "audit", writeChain(t, chain[10:]), "--checkpoint", writeCheckpoint(t, forged), "--gate-key", key)
	assert.Equal(t, 1, code, "a checkpoint signed by another key")
}

func TestAuditCheckpointUsage(t *testing.T) {
	gate := audittest.GateKey(1)
	chain := audittest.Chain(3, approvedAt)
	f := writeChain(t, chain)
	key := writeGateKey(t, gate)
	cp := writeCheckpoint(t, audittest.SignedCheckpoint(gate, chain[0]))
	garbage := filepath.Join(t.TempDir(), "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte("not a key"), 0o600))
	rsaPEM := filepath.Join(t.TempDir(), "rsa.pem")
	require.NoError(t, os.WriteFile(rsaPEM, []byte(rs256PEM(t)), 0o600))
	for name, args := range map[string][]string{
		"checkpoint alone":      {"audit", f, "--checkpoint", cp},
		"gate key alone":        {"audit", f, "--gate-key", key},
		"anchor and checkpoint": {"audit", f, "--checkpoint", cp, "--gate-key", key, "--anchor", chain[0].Hash.String()},
		"missing checkpoint":    {"audit", f, "--checkpoint", filepath.Join(t.TempDir(), "nope"), "--gate-key", key},
		"garbage checkpoint":    {"audit", f, "--checkpoint", garbage, "--gate-key", key},
		"garbage key":           {"audit", f, "--checkpoint", cp, "--gate-key", garbage},
		"not an ed25519 key":    {"audit", f, "--checkpoint", cp, "--gate-key", rsaPEM},
	} {
		code, _, stderr := runCLI(approvedAt, args...)
		assert.Equal(t, 2, code, "%s: %s", name, stderr)
	}
}

// rs256PEM returns the PEM public key of the RS256 golden receipt.
func rs256PEM(t *testing.T) string {
	b, err := os.ReadFile("../../receipt/testdata/golden/rs256.pem")
	require.NoError(t, err)
	return string(b)
}
