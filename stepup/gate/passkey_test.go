package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestApproveRefusesEachWebAuthnCheck bends one thing per case and shows
// Approve refusing it; the same ticket then approves with an honest
// assertion, so the refusal came from the bent check.
func TestApproveRefusesEachWebAuthnCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		answer func(t *testing.T, w *world, id stepup.TicketID) []byte
		want   error
	}{
		{"wrong challenge", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithChallenge(bytes.Repeat([]byte{1}, 32)))
		}, stepup.ErrBadAssertion},
		{"wrong origin", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithOrigin("https://agent.example.com"))
		}, stepup.ErrBadAssertion},
		{"wrong RP ID", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithRPID("agent.example.com"))
		}, stepup.ErrBadAssertion},
		{"user verification missing", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithoutUserVerification())
		}, stepup.ErrBadAssertion},
		{"user presence missing", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithoutUserPresence())
		}, stepup.ErrBadAssertion},
		{"counter not advanced", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			other := pending(t, w, "finance@example.org")
			_, err := w.Approve(other, stepuptest.WithSignCount(7))
			require.NoError(t, err)
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithSignCount(7))
		}, passkey.ErrCounter},
		{"counter went back", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			other := pending(t, w, "finance@example.org")
			_, err := w.Approve(other, stepuptest.WithSignCount(7))
			require.NoError(t, err)
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithSignCount(3))
		}, passkey.ErrCounter},
		{"unknown credential", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			stranger := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
			_, err := stranger.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","user":{"id":"AQ"}}`))
			require.NoError(t, err)
			return assertFor(t, w, stranger, id)
		}, passkey.ErrUnknownCredential},
		{"user handle of another user", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, id, stepuptest.WithUserHandle([]byte("someone-else")))
		}, stepup.ErrBadAssertion},
		{"assertion for another ticket", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return assertFor(t, w, w.Authenticator, pending(t, w, "finance@example.org"))
		}, stepup.ErrBadAssertion},
		{"not JSON", func(t *testing.T, w *world, id stepup.TicketID) []byte {
			return []byte("yes")
		}, stepup.ErrBadAssertion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			id := pending(t, w, "finance@example.com")
			_, err := w.Gate.Desk().Approve(ctx, id, tt.answer(t, w, id))
			assert.ErrorIs(t, err, tt.want)
			if check, ok := failedChecks[tt.name]; ok {
				var ae *passkey.AssertionError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, check, ae.Check)
			}
			got, err := w.Gate.Ticket(ctx, id)
			assert.Equal(t, stepup.StatusPending, got.Status, "a refused answer leaves the ticket pending (%v)", err)
			_, err = w.Gate.Execute(ctx, id)
			assert.ErrorIs(t, err, stepup.ErrNotApproved)
			approved, err := w.Approve(id, stepuptest.WithSignCount(100))
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, approved.Status)
		})
	}
}

func TestApproveRefusesAnotherUsersCredential(t *testing.T) {
	ctx := context.Background()
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "send_email", Class: "external", Approvers: "finance"})
	require.NoError(t, err)
	h := stepuptest.NewGate(t, cat, gate.WithApproverGroup("finance", stepuptest.Approver))
	erin := h.Enroll(t, "user:erin")
	tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	p, err := h.Gate.Desk().Prompt(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{stepuptest.Approver}, p.Approvers)
	// Erin's authenticator is not asked (allowCredentials lists Dana's
	// only), so she signs with her own credential anyway.
	answer, err := erin.Assert(p.Options, stepuptest.WithCredential(erin.CredentialIDs()[0]))
	require.NoError(t, err)
	_, err = h.Gate.Desk().Approve(ctx, tk.ID, answer)
	assert.ErrorIs(t, err, stepup.ErrNotPermitted)
	answer, err = erin.Assert(p.DenyOptions, stepuptest.WithCredential(erin.CredentialIDs()[0]))
	require.NoError(t, err)
	_, err = h.Gate.Desk().Deny(ctx, tk.ID, answer, "no")
	assert.ErrorIs(t, err, stepup.ErrNotPermitted)
	_, err = h.Approve(tk.ID)
	assert.NoError(t, err)
}

func TestAssertionReplayed(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	id := pending(t, w, "finance@example.com")
	answer := assertFor(t, w, w.Authenticator, id)
	_, err := w.Gate.Desk().Approve(ctx, id, answer)
	require.NoError(t, err)
	_, err = w.Gate.Desk().Approve(ctx, id, answer)
	assert.ErrorIs(t, err, stepup.ErrResolved, "replayed on the same ticket")
	other := pending(t, w, "finance@example.org")
	_, err = w.Gate.Desk().Approve(ctx, other, answer)
	assert.ErrorIs(t, err, stepup.ErrBadAssertion, "replayed on another ticket")
}

func TestEvidenceKeepsTheRawAssertion(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	id := pending(t, w, "finance@example.com")
	p, err := w.Gate.Desk().Prompt(ctx, id)
	require.NoError(t, err)
	_, err = w.Gate.Desk().Approve(ctx, id, assertFor(t, w, w.Authenticator, id))
	require.NoError(t, err)
	a, err := w.Store.Get(ctx, string(id))
	require.NoError(t, err)
	var sealed struct {
		MAC    string `json:"gate_mac"`
		Answer []byte `json:"answer"`
	}
	require.NoError(t, json.Unmarshal(a.Evidence, &sealed))
	assert.Len(t, sealed.MAC, 64, "the gate's MAC ties the answer to this ticket")
	ev, err := passkey.ParseEvidence(sealed.Answer)
	require.NoError(t, err)
	assert.Equal(t, stepuptest.Approver, ev.User)
	assert.Equal(t, w.Authenticator.CredentialIDs()[0], ev.CredentialID)
	assert.Equal(t, stepuptest.RP().ID, ev.RPID)
	assert.Equal(t, stepuptest.RP().Origin, ev.Origin)
	assert.Contains(t, string(ev.ClientDataJSON), b64(p.Challenge[:]))
	assert.Len(t, ev.AuthenticatorData, 37)
	assert.NotEmpty(t, ev.Signature)
}

// pending proposes a send_email to addr and returns its pending ticket.
func pending(t *testing.T, w *world, addr string) stepup.TicketID {
	t.Helper()
	tk, err := w.Gate.Propose(context.Background(), sendEmail(addr))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk.ID
}

// assertFor signs ticket id's prompt with a.
func assertFor(t *testing.T, w *world, a *stepuptest.Authenticator, id stepup.TicketID, tweaks ...stepuptest.Tweak) []byte {
	t.Helper()
	p, err := w.Gate.Desk().Prompt(context.Background(), id)
	require.NoError(t, err)
	// The request lists only the ticket's approvers' credentials; a
	// stranger's authenticator signs with its own credential anyway.
	tweaks = append([]stepuptest.Tweak{stepuptest.WithCredential(a.CredentialIDs()[0])}, tweaks...)
	out, err := a.Assert(p.Options, tweaks...)
	require.NoError(t, err)
	return out
}

// failedChecks names the check each bent answer must be refused by.
var failedChecks = map[string]string{
	"wrong challenge":              "challenge",
	"wrong origin":                 "origin",
	"wrong RP ID":                  "rp id",
	"user verification missing":    "user verification",
	"user presence missing":        "user presence",
	"user handle of another user":  "User handle and User ID do not match",
	"assertion for another ticket": "challenge",
	"not JSON":                     "malformed",
}
