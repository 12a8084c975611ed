package audit_test

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// naiveAuditHash is ComputeHash without its UTF-8 check: encoding/json
// writes invalid bytes as U+FFFD before canon sees them.
func naiveAuditHash(t *testing.T, r audit.Record) canon.Digest {
	t.Helper()
	r.Hash = canon.Digest{}
	if r.Taint == nil {
		r.Taint = []string{}
	}
	if r.Principal.Delegations == nil {
		r.Principal.Delegations = []string{}
	}
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	c, err := canon.Canonicalize(raw)
	require.NoError(t, err)
	return sha256.Sum256(append([]byte(audit.Tag+"\x00"), c...))
}

// TestAuditHashRefusesInvalidUTF8: a record whose text is not UTF-8 and
// the record with U+FFFD in its place are different records; a hash that
// gave them one value would let an edit from one to the other pass
// VerifyChain. ComputeHash refuses the first, for every text field.
func TestAuditHashRefusesInvalidUTF8(t *testing.T) {
	base := audit.Record{Seq: 1, Time: 1, Decision: audit.DecisionDeny, Reason: "r"}
	cases := []struct {
		name string
		set  func(*audit.Record, string)
	}{
		{"reason", func(r *audit.Record, s string) { r.Reason = s }},
		{"session", func(r *audit.Record, s string) { r.Session = s }},
		{"task", func(r *audit.Record, s string) { r.Task = s }},
		{"step", func(r *audit.Record, s string) { r.Step = s }},
		{"ticket id", func(r *audit.Record, s string) { r.TicketID = s }},
		{"tool", func(r *audit.Record, s string) { r.Tool = s }},
		{"effect class", func(r *audit.Record, s string) { r.EffectClass = s }},
		{"principal user", func(r *audit.Record, s string) { r.Principal.User = s }},
		{"principal agent", func(r *audit.Record, s string) { r.Principal.Agent = s }},
		{"delegation", func(r *audit.Record, s string) { r.Principal.Delegations = []string{s} }},
		{"policy version", func(r *audit.Record, s string) { r.PolicyVersion = s }},
		{"decision", func(r *audit.Record, s string) { r.Decision = s }},
		{"taint", func(r *audit.Record, s string) { r.Taint = []string{"web", s} }},
		{"approver", func(r *audit.Record, s string) { r.Approver = s }},
		{"nonce", func(r *audit.Record, s string) { r.Nonce = s }},
		{"card hash", func(r *audit.Record, s string) { r.CardHash = s }},
		{"result", func(r *audit.Record, s string) { r.Result = s }},
		{"idempotency key", func(r *audit.Record, s string) { r.IdempotencyKey = s }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad, replaced := base, base
			c.set(&bad, "pay \xff mallory")
			c.set(&replaced, "pay \uFFFD mallory")

			// The naive hash cannot tell the two records apart.
			require.Equal(t, naiveAuditHash(t, bad), naiveAuditHash(t, replaced))

			_, err := bad.ComputeHash()
			require.ErrorIs(t, err, canon.ErrInvalidUTF8)
			assert.NotContains(t, err.Error(), "mallory", "errors never quote record text")
			h, err := replaced.ComputeHash()
			require.NoError(t, err)
			assert.Equal(t, naiveAuditHash(t, replaced), h, "valid records hash as before")

			// A chain holding the record does not verify.
			bad.Hash = h
			var cb *audit.ChainBreak
			require.ErrorAs(t, audit.VerifyChain([]audit.Record{bad}, canon.Digest{}), &cb)
			assert.Equal(t, 0, cb.Index)
		})
	}
}
