package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// TestQuorum: two approvers' receipts of one request verify for --k 2
// with both keys, not with one key, and not for --k 3; a usage error
// exits 2.
func TestQuorum(t *testing.T) {
	dana := newFixture(t, receipttest.ES256)
	erinSigner, err := receipttest.New(receipttest.EdDSA, "user:erin")
	require.NoError(t, err)
	doc, err := os.ReadFile(dana.receipt)
	require.NoError(t, err)
	first, err := receipt.Parse(doc)
	require.NoError(t, err)
	second, err := erinSigner.Cosign(first, approvedAt)
	require.NoError(t, err)
	erin := writeFixture(t, erinSigner, second)
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{first, second}}
	raw, err := q.Marshal()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "quorum.json")
	require.NoError(t, os.WriteFile(file, raw, 0o600))

	args := func(k string, keys ...string) []string {
		a := []string{"quorum", file, "--k", k, "--rp-id", receipttest.RPID, "--origin", receipttest.Origin}
		for _, key := range keys {
			a = append(a, "--key", key)
		}
		return a
	}
	danaKey, erinKey := "user:dana="+dana.cose, "user:erin="+erin.pem
	code, out, errOut := runCLI(approvedAt, args("2", danaKey, erinKey)...)
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "valid: 2 or more distinct approvers")
	code, out, _ = runCLI(approvedAt, args("2", danaKey)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "quorum not met")
	code, _, _ = runCLI(approvedAt, args("3", danaKey, erinKey)...)
	assert.Equal(t, 1, code)
	// Erin's key listed as Dana's: her receipt names Erin, so it counts for nobody.
	code, _, _ = runCLI(approvedAt, args("2", danaKey, "user:dana="+erin.pem)...)
	assert.Equal(t, 1, code)
	code, _, errOut = runCLI(approvedAt, args("2", dana.cose)...)
	assert.Equal(t, 2, code, "a key without its person")
	assert.Contains(t, errOut, "USER=KEYFILE")
	code, _, errOut = runCLI(approvedAt, "quorum", file, "--k", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--key")
}
