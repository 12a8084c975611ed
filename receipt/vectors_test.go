package receipt_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/internal/vectorgen"
)

// The published vectors in testdata/vectors are what other verifiers are
// held to; these tests hold receipt's own verifiers to the verdicts they
// state. The Node.js and Python verifiers are held to the same files in
// receipt/interop.

func readVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors/" + name)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), name)
}

func unhex32(t *testing.T, s string) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 32)
	return [32]byte(b)
}

func TestVectorsChallenge(t *testing.T) {
	var f vectorgen.ChallengeFile
	readVectors(t, "challenge.json", &f)
	require.NotEmpty(t, f.Vectors)
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			got := receipt.Challenge(unhex32(t, v.Digest), unhex32(t, v.Nonce), v.ExpiresAt, unhex32(t, v.CardHash))
			assert.Equal(t, v.Challenge, hex.EncodeToString(got[:]))
			assert.Equal(t, v.ChallengeB64URL, base64.RawURLEncoding.EncodeToString(got[:]))
			deny := receipt.DenyChallenge(got)
			assert.Equal(t, v.DenyChallenge, hex.EncodeToString(deny[:]))
		})
	}
}

func TestVectorsCardHash(t *testing.T) {
	var f vectorgen.CardHashFile
	readVectors(t, "card_hash.json", &f)
	require.NotEmpty(t, f.Vectors)
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			c, err := receipt.CardLimits().Canonicalize([]byte(v.CardJSON))
			require.NoError(t, err)
			assert.Equal(t, v.Canonical, string(c))
			h, err := receipt.CardHash([]byte(v.CardJSON))
			require.NoError(t, err)
			assert.Equal(t, v.CardHash, h.String())
		})
	}
}

// receiptVerdict is receipt's verdict on one receipt vector: "" when it
// verifies, else the first failed check, or "parse".
func receiptVerdict(t *testing.T, raw []byte, key *receipt.TrustedKey, p receipt.Policy) string {
	t.Helper()
	r, err := receipt.Parse(raw)
	if err != nil {
		return "parse"
	}
	res, err := receipt.Verify(r, key, p)
	if err == nil {
		require.True(t, res.Valid)
		return ""
	}
	var ce *receipt.CheckError
	require.True(t, errors.As(err, &ce), "a failed Verify returns a *CheckError: %v", err)
	return string(ce.Check)
}

func trustedKeys(t *testing.T, keys map[string]vectorgen.KeyJSON) map[string]*receipt.TrustedKey {
	t.Helper()
	out := map[string]*receipt.TrustedKey{}
	for name, k := range keys {
		cose, err := base64.RawURLEncoding.DecodeString(k.COSE)
		require.NoError(t, err)
		tk, err := receipt.ParseCOSEKey(cose)
		require.NoError(t, err, name)
		assert.Equal(t, k.Alg, tk.Algorithm(), name)
		out[name] = tk
	}
	return out
}

func TestVectorsReceipts(t *testing.T) {
	var f vectorgen.ReceiptFile
	readVectors(t, "receipts.json", &f)
	keys := trustedKeys(t, f.Keys)
	p := receipt.Policy{RPID: f.Policy.RPID, Origins: f.Policy.Origins}
	classes := map[string]bool{}
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			key, ok := keys[v.Key]
			require.True(t, ok, "key %s", v.Key)
			got := receiptVerdict(t, v.Receipt, key, p)
			assert.Equal(t, v.Valid, got == "", "valid: failed %q", got)
			assert.Equal(t, v.FailedCheck, got)
		})
		if !v.Valid {
			classes[v.FailedCheck] = true
		}
	}
	for _, c := range []receipt.CheckName{receipt.CheckDigest, receipt.CheckCardHash, receipt.CheckClientDataType,
		receipt.CheckChallenge, receipt.CheckOrigin, receipt.CheckRPID, receipt.CheckUserPresent, receipt.CheckUserVerified,
		receipt.CheckPublicKey, receipt.CheckSignature} {
		assert.True(t, classes[string(c)], "a tampered vector fails the %s check first", c)
	}
}

func TestVectorsQuorum(t *testing.T) {
	var f vectorgen.QuorumFile
	readVectors(t, "quorum.json", &f)
	keys := trustedKeys(t, f.Keys)
	p := receipt.Policy{RPID: f.Policy.RPID, Origins: f.Policy.Origins}
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			var people []receipt.Person
			for _, person := range v.People {
				rp := receipt.Person{User: person.User}
				for _, k := range person.Keys {
					rp.Keys = append(rp.Keys, keys[k])
				}
				people = append(people, rp)
			}
			q, err := receipt.ParseQuorum(v.Quorum)
			require.NoError(t, err)
			_, err = receipt.VerifyQuorum(q, people, v.K, p)
			assert.Equal(t, v.Valid, err == nil, "%v", err)
			if !v.Valid {
				// Too few approvers, or people who share a key.
				assert.True(t, errors.Is(err, receipt.ErrQuorum) || errors.Is(err, receipt.ErrPolicy), "%v", err)
			}
		})
	}
}

func TestVectorsAuditChains(t *testing.T) {
	var f vectorgen.ChainFile
	readVectors(t, "audit_chains.json", &f)
	pubBytes, err := hex.DecodeString(f.GatePublicKey)
	require.NoError(t, err)
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			var export bytes.Buffer
			for _, r := range v.Records {
				require.NoError(t, json.Compact(&export, r))
				export.WriteByte('\n')
			}
			records, err := audit.ReadChain(&export)
			require.NoError(t, err)
			if v.Checkpoint != nil {
				err = audit.VerifyChainFrom(records, pubBytes, v.Checkpoint.Checkpoint, v.Checkpoint.Sig)
			} else {
				var anchor canon.Digest
				if v.Anchor != "" {
					anchor = unhex32(t, v.Anchor)
				}
				err = audit.VerifyChain(records, anchor)
			}
			assert.Equal(t, v.Valid, err == nil, "%v", err)
			if !v.Valid {
				var br *audit.ChainBreak
				assert.True(t, errors.As(err, &br) || errors.Is(err, audit.ErrCheckpoint), "%v", err)
			}
		})
	}
}

// TestVectorsCatchNaiveVerifiers shows that the tampered vectors bite: a
// verifier that checks only the passkey signature accepts a vector of
// every class but the signature's own, and one that checks only each audit
// record's own hash accepts removed, reordered and rewritten chains.
func TestVectorsCatchNaiveVerifiers(t *testing.T) {
	t.Run("receipts: signature only", func(t *testing.T) {
		var f vectorgen.ReceiptFile
		readVectors(t, "receipts.json", &f)
		keys := trustedKeys(t, f.Keys)
		p := receipt.Policy{RPID: f.Policy.RPID, Origins: f.Policy.Origins}
		fooled := map[string]bool{}
		for _, v := range f.Vectors {
			r, err := receipt.Parse(v.Receipt)
			if err != nil || v.Valid {
				continue
			}
			res, _ := receipt.Verify(r, keys[v.Key], p)
			if c, ok := res.Check(receipt.CheckSignature); ok && c.Outcome == receipt.Pass {
				fooled[v.FailedCheck] = true
			}
		}
		for _, c := range []receipt.CheckName{receipt.CheckDigest, receipt.CheckCardHash, receipt.CheckClientDataType,
			receipt.CheckChallenge, receipt.CheckOrigin, receipt.CheckRPID, receipt.CheckUserPresent, receipt.CheckUserVerified} {
			assert.True(t, fooled[string(c)], "a signature-only verifier accepts a receipt that fails %s", c)
		}
		assert.False(t, fooled[string(receipt.CheckSignature)])
	})
	t.Run("chains: each record's own hash only", func(t *testing.T) {
		var f vectorgen.ChainFile
		readVectors(t, "audit_chains.json", &f)
		fooled := map[string]bool{}
		for _, v := range f.Vectors {
			ok := !v.Valid
			for _, raw := range v.Records {
				var r audit.Record
				require.NoError(t, json.Unmarshal(raw, &r))
				h, err := r.ComputeHash()
				ok = ok && err == nil && h.Equal(r.Hash)
			}
			fooled[v.Name] = ok
		}
		for _, name := range []string{"row-removed/middle", "row-removed/first", "row-removed/tail-before-checkpoint",
			"reordered", "row-altered/rewritten-through-checkpoint", "checkpoint/forged-key"} {
			assert.True(t, fooled[name], "a verifier that checks only each record's hash accepts %s", name)
		}
		assert.False(t, fooled["row-altered/hash-kept"])
	})
}
