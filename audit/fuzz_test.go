package audit_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

// FuzzReadChain: reading an exported audit chain never panics, a chain it
// accepts writes back to records it reads the same, names every member of
// every line exactly as a field (as any JSON reader reads the names), and
// checking it never panics either.
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
		for line := range bytes.Lines(data) {
			assertExactNames(t, line)
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

// recordNames are the member names of an exported line, and those of its
// principal.
var (
	recordNames = map[string]bool{"seq": true, "time": true, "ticket_id": true, "task": true, "step": true,
		"session": true, "tool": true, "effect_class": true, "args_digest": true, "args": true, "principal": true,
		"policy_version": true, "decision": true, "reason": true, "taint": true, "approver": true, "nonce": true,
		"card_hash": true, "decision_millis": true, "result": true, "idempotency_key": true, "prev_hash": true,
		"hash": true}
	principalNames = map[string]bool{"user": true, "agent": true, "delegations": true}
)

// assertExactNames fails when a line's members, read as a plain JSON
// object, are not all named as a record's fields.
func assertExactNames(t *testing.T, line []byte) {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(line, &top))
	for k := range top {
		assert.True(t, recordNames[k], "member %q read as a field", k)
	}
	var principal map[string]json.RawMessage
	if p := top["principal"]; len(p) > 0 && p[0] == '{' {
		require.NoError(t, json.Unmarshal(p, &principal))
	}
	for k := range principal {
		assert.True(t, principalNames[k], "principal member %q read as a field", k)
	}
}
