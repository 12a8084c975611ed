package receipt_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// FuzzReadChain: reading an exported audit chain never panics, a chain it
// accepts writes back to records it reads the same, and checking it never
// panics either.
func FuzzReadChain(f *testing.F) {
	var buf bytes.Buffer
	require.NoError(f, receipt.WriteChain(&buf, receipttest.AuditChain(3, time.Unix(1_800_000_000, 0))))
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, err := receipt.ReadChain(bytes.NewReader(data))
		if err != nil {
			return
		}
		var again bytes.Buffer
		require.NoError(t, receipt.WriteChain(&again, records))
		back, err := receipt.ReadChain(&again)
		require.NoError(t, err)
		assert.Equal(t, len(records), len(back))
		for i := range records {
			a, errA := records[i].ComputeHash()
			b, errB := back[i].ComputeHash()
			if errA == nil {
				require.NoError(t, errB)
				assert.Equal(t, a, b, "record %d changed on the way through", i)
			}
		}
		_ = receipt.VerifyChain(records, canon.Digest{})
	})
}

// FuzzParseCOSEKey: a key file's content never panics the parser, and an
// accepted key is one of the algorithms a receipt may use.
func FuzzParseCOSEKey(f *testing.F) {
	for _, alg := range receipttest.Algorithms() {
		s, err := receipttest.New(alg, "user:dana")
		require.NoError(f, err)
		f.Add(s.COSEKey())
	}
	f.Fuzz(func(t *testing.T, cose []byte) {
		k, err := receipt.ParseCOSEKey(cose)
		if err != nil {
			return
		}
		assert.NotNil(t, k)
	})
}
