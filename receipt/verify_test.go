package receipt_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// approvedAt and expiresAt are fixed times for receipts made in tests.
var (
	approvedAt = time.Unix(1_790_000_000, 0)
	expiresAt  = approvedAt.Add(15 * time.Minute)
)

// signers caches one signer per algorithm: RSA key generation is slow.
func newSigner(t testing.TB, alg receipttest.Algorithm) *receipttest.Signer {
	t.Helper()
	s, err := receipttest.New(alg, "user:dana")
	require.NoError(t, err)
	return s
}

func sign(t testing.TB, s *receipttest.Signer, tweaks ...receipttest.Tweak) *receipt.Receipt {
	t.Helper()
	e := receipttest.Effect("finance@example.com")
	r, err := s.Sign(e, receipttest.Card(e), expiresAt, approvedAt, tweaks...)
	require.NoError(t, err)
	return r
}

func TestVerifyAcceptsEachAlgorithm(t *testing.T) {
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := newSigner(t, alg)
			r := sign(t, s)
			res, err := receipt.Verify(r, s.Trusted(), s.Policy())
			require.NoError(t, err)
			assert.True(t, res.Valid)
			require.Len(t, res.Checks, len(receipt.CheckNames()))
			for i, c := range res.Checks {
				assert.Equal(t, receipt.CheckNames()[i], c.Name)
				if c.Name == receipt.CheckExpiry {
					assert.Equal(t, receipt.Reported, c.Outcome)
				} else {
					assert.Equal(t, receipt.Pass, c.Outcome, c.Name)
				}
			}
			assert.Equal(t, alg.String(), res.Algorithm)
			require.NotNil(t, res.Effect)
			assert.Equal(t, "send_email", res.Effect.Tool)
			assert.Equal(t, r.Digest, res.Digest)
			assert.Equal(t, expiresAt.UTC(), res.ExpiresAt)
		})
	}
}
