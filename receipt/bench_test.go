package receipt_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// BenchmarkVerify measures a whole receipt verification; compare ES256 with
// BenchmarkECDSAP256Verify, the one signature check it cannot avoid
// (goal: within 1.3x).
func BenchmarkVerify(b *testing.B) {
	for _, alg := range receipttest.Algorithms() {
		b.Run(alg.String(), func(b *testing.B) {
			s := newSigner(b, alg)
			r := sign(b, s)
			key, p := s.Trusted(), s.Policy()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := receipt.Verify(r, key, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkECDSAP256Verify is the baseline: one ECDSA P-256 verification
// of a SHA-256 digest with crypto/ecdsa.
func BenchmarkECDSAP256Verify(b *testing.B) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(b, err)
	d := sha256.Sum256([]byte("authenticator data and client data hash"))
	sig, err := ecdsa.SignASN1(rand.Reader, k, d[:])
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if !ecdsa.VerifyASN1(&k.PublicKey, d[:], sig) {
			b.Fatal("does not verify")
		}
	}
}

// BenchmarkVerifyRatio alternates one ES256 receipt verification and one
// ECDSA P-256 verification in the same loop, so load on the machine hits
// both alike, and reports their ratio (goal: at most 1.3).
func BenchmarkVerifyRatio(b *testing.B) {
	s := newSigner(b, receipttest.ES256)
	r := sign(b, s)
	key, p := s.Trusted(), s.Policy()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(b, err)
	d := sha256.Sum256([]byte("authenticator data and client data hash"))
	sig, err := ecdsa.SignASN1(rand.Reader, k, d[:])
	require.NoError(b, err)
	var tv, te time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := receipt.Verify(r, key, p); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if !ecdsa.VerifyASN1(&k.PublicKey, d[:], sig) {
			b.Fatal("does not verify")
		}
		tv += t1.Sub(t0)
		te += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(tv.Nanoseconds())/float64(n), "verify-ns/op")
	b.ReportMetric(float64(te.Nanoseconds())/float64(n), "ecdsa-ns/op")
	b.ReportMetric(float64(tv)/float64(te), "ratio")
}
