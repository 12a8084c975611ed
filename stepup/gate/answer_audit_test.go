package gate_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestAnswersNoEnrolledKeySignedLeaveNoAuditRow: the desk records a
// refused answer only when an enrolled person's authenticator signed it
// for this ticket's challenge (TestRefusedAnswersLeaveAnAuditRow). Answers
// anyone can make or replay, whatever credential they name, are refused
// without a row, so they cannot fill the chain: bytes that are no
// assertion, an assertion by an authenticator nobody enrolled, one naming
// Dana's credential but signed by Mallory's key, one of Dana's for another
// challenge (a copy of any answer she ever gave is one), one of Dana's
// with its signature altered.
func TestAnswersNoEnrolledKeySignedLeaveNoAuditRow(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorld(t)
	mallory := w.Enroll(t, "user:mallory")
	stranger := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
	_, err := stranger.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","user":{"id":"AQ"}}`))
	require.NoError(t, err)
	rows := func() int {
		r, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
		require.NoError(t, err)
		return len(r)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	forged := map[string]func(options []byte) []byte{
		"bytes": func([]byte) []byte {
			b := make([]byte, rng.IntN(600))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return b
		},
		"unenrolled authenticator": func(options []byte) []byte {
			a, err := stranger.Assert(options, stepuptest.WithCredential(stranger.CredentialIDs()[0]))
			require.NoError(t, err)
			return a
		},
		"Dana's credential, Mallory's key": func(options []byte) []byte {
			a, err := mallory.Assert(options, stepuptest.WithCredential(mallory.CredentialIDs()[0]))
			require.NoError(t, err)
			return renameCredential(t, a, w.Authenticator.CredentialIDs()[0])
		},
		"Dana's answer to another challenge": func(options []byte) []byte {
			a, err := w.Authenticator.Assert(options, stepuptest.WithChallenge(make([]byte, 32)))
			require.NoError(t, err)
			return a
		},
		"Dana's answer, signature altered": func(options []byte) []byte {
			a, err := w.Authenticator.Assert(options)
			require.NoError(t, err)
			return alterSignature(t, a, rng)
		},
	}
	for name, forge := range forged {
		for i := range 3 {
			c := stepuptest.SendEmail("finance@example.com")
			c.Step, c.Session = fmt.Sprintf("%s %d", name, i), fmt.Sprintf("s-%s-%d", name, i)
			tk, err := w.Gate.Propose(ctx, c)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
			p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			before := rows()
			_, err = w.Gate.Desk().Approve(ctx, tk.ID, forge(p.Options))
			require.Error(t, err, name)
			assert.Equal(t, before, rows(), "%s: a row for an answer no enrolled key signed", name)
			got, err := w.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status)
		}
	}
	// The control: Dana's answer to this ticket's challenge, made on a page
	// at another origin (a relay), is hers, and leaves a row naming her.
	c := stepuptest.SendEmail("finance@example.com")
	c.Step = "control"
	tk, err := w.Gate.Propose(ctx, c)
	require.NoError(t, err)
	before := rows()
	_, err = w.Approve(tk.ID, stepuptest.WithOrigin("https://approve.evil.net"))
	require.Error(t, err)
	r, err := w.Store.AuditRange(ctx, stepuptest.Start().Add(-time.Hour), auditFar)
	require.NoError(t, err)
	require.Len(t, r, before+1)
	last := r[len(r)-1]
	assert.Equal(t, audit.DecisionRefused, last.Decision)
	assert.Equal(t, stepuptest.Approver, last.Approver)
	assert.Equal(t, string(tk.ID), last.TicketID)

	// That answer, copied and posted again and again, leaves no more rows.
	p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	relayed, err := w.Authenticator.Assert(p.Options, stepuptest.WithOrigin("https://approve.evil.net"))
	require.NoError(t, err)
	before = rows()
	for range 20 {
		_, err = w.Gate.Desk().Approve(ctx, tk.ID, relayed)
		require.Error(t, err)
	}
	assert.Equal(t, before+1, rows(), "copies of one refused answer left more than its one row")
	// Nor do copies of it spelled other ways (see respell).
	r2 := rand.New(rand.NewPCG(5, 24))
	for i := range 20 {
		_, err = w.Gate.Desk().Approve(ctx, tk.ID, respell(t, r2, relayed))
		require.Error(t, err, "spelling %d", i)
	}
	assert.Equal(t, before+1, rows(), "respelled copies of one refused answer left more than its one row")
}

// renameCredential makes an assertion name credential id instead of the
// one that signed it.
func renameCredential(t *testing.T, answer, id []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(answer, &m))
	m["id"] = base64.RawURLEncoding.EncodeToString(id)
	m["rawId"] = m["id"]
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// alterSignature flips one bit of an assertion's signature.
func alterSignature(t *testing.T, answer []byte, rng *rand.Rand) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(answer, &m))
	resp := m["response"].(map[string]any)
	sig, err := base64.RawURLEncoding.DecodeString(resp["signature"].(string))
	require.NoError(t, err)
	sig[rng.IntN(len(sig))] ^= 1 << rng.IntN(8)
	resp["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}
