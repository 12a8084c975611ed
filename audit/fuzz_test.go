package audit_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

// FuzzReadChain: reading an exported audit chain never panics, a chain it
// accepts writes back to records it reads the same, and checking it never
// panics either.
func FuzzReadChain(f *testing.F) {
	var buf bytes.Buffer
	require.NoError(f, audit.WriteChain(&buf, audittest.Chain(3, time.Unix(1_800_000_000, 0))))
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, err := audit.ReadChain(bytes.NewReader(data))
		if err != nil {
			return
		}
		var again bytes.Buffer
		require.NoError(t, audit.WriteChain(&again, records))
		back, err := audit.ReadChain(&again)
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
		_ = audit.VerifyChain(records, canon.Digest{})
	})
}

// FuzzVerifier: on any export, the streaming verifier never panics and
// accepts it exactly when ReadChain then VerifyChain does.
func FuzzVerifier(f *testing.F) {
	var buf bytes.Buffer
	require.NoError(f, audit.WriteChain(&buf, audittest.Chain(4, time.Unix(1_800_000_000, 0))))
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, got := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{}).Verify()
		records, err := audit.ReadChain(bytes.NewReader(data))
		if err == nil {
			err = audit.VerifyChain(records, canon.Digest{})
		}
		assert.Equal(t, err == nil, got == nil, "ReadChain+VerifyChain: %v; Verifier: %v", err, got)
	})
}
