package passkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func TestEnrollment(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *stepuptest.Harness) error
		want error
	}{
		{"Ed25519 passkey", func(t *testing.T, h *stepuptest.Harness) error {
			a, err := stepuptest.Enroll(ctx, h.Enrollment, "user:erin", stepuptest.WithAlgorithm(stepuptest.EdDSA))
			if err != nil {
				return err
			}
			tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`),
				Session: "s", Principal: agentFor("user:erin")})
			require.NoError(t, err)
			_, err = stepuptest.Approve(ctx, h.Gate.Desk(), a, tk.ID)
			return err
		}, nil},
		{"invite used twice", func(t *testing.T, h *stepuptest.Harness) error {
			token, err := h.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			require.NoError(t, register(h, token))
			return register(h, token)
		}, passkey.ErrInvite},
		{"invite expired", func(t *testing.T, h *stepuptest.Harness) error {
			token, err := h.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			h.Clock.Advance(25 * time.Hour)
			return register(h, token)
		}, passkey.ErrInvite},
		{"token names another user", func(t *testing.T, h *stepuptest.Harness) error {
			token, err := h.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			secret := token[:43]
			return register(h, secret+"."+b64([]byte("user:mallory")))
		}, passkey.ErrInvite},
		{"made-up token", func(t *testing.T, h *stepuptest.Harness) error {
			return register(h, b64(make([]byte, 32))+"."+b64([]byte("user:mallory")))
		}, passkey.ErrInvite},
		{"agent invited", func(t *testing.T, h *stepuptest.Harness) error {
			_, err := h.Enrollment.Invite(ctx, "agent:reports")
			return err
		}, stepup.ErrNotPermitted},
		{"the policy's name invited", func(t *testing.T, h *stepuptest.Harness) error {
			_, err := h.Enrollment.Invite(ctx, "policy:2026-10-30.1")
			return err
		}, stepup.ErrNotPermitted},
		{"a grant's name invited", func(t *testing.T, h *stepuptest.Harness) error {
			_, err := h.Enrollment.Invite(ctx, "grant:g-1")
			return err
		}, stepup.ErrNotPermitted},
		{"registration from the agent's origin", func(t *testing.T, h *stepuptest.Harness) error {
			token, err := h.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			return register(h, token, stepuptest.WithOrigin("https://agent.example.com"))
		}, stepup.ErrBadAssertion},
		{"registration without user verification", func(t *testing.T, h *stepuptest.Harness) error {
			token, err := h.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			return register(h, token, stepuptest.WithoutUserVerification())
		}, stepup.ErrBadAssertion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil)
			err := tt.run(t, h)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func register(h *stepuptest.Harness, token string, tweaks ...stepuptest.Tweak) error {
	ctx := context.Background()
	opts, err := h.Enrollment.BeginEnroll(ctx, token)
	if err != nil {
		return err
	}
	resp, err := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin).Register(opts, tweaks...)
	if err != nil {
		return err
	}
	_, err = h.Enrollment.FinishEnroll(ctx, token, resp)
	return err
}

// TestInviteRefusesEveryNonPersonSpelling: invites are minted only for
// well-formed person ids; agents, the gate's reserved names and every
// look-alike spelling of them are refused.
func TestInviteRefusesEveryNonPersonSpelling(t *testing.T) {
	h := stepuptest.NewGate(t, nil)
	ctx := context.Background()
	bad := []string{"", "dana", "Agent:reports", "\u0430gent:reports", "agent:reports", "AGENT:reports",
		"GRANT:x", "grant:x", "policy:v1", "Policy:v1", "user:Dana", "user: dana", "user:dana\u200b",
		"ｕser:dana", "user:dan\u0430", "user:", "group:finance", "user:dana\n", "user:d\u0131ana"}
	for _, name := range bad {
		_, err := h.Enrollment.Invite(ctx, name)
		assert.ErrorIs(t, err, stepup.ErrNotPermitted, "%q", name)
	}
	for _, name := range []string{"user:erin", "user:erin@example.com", "user:e.r-i_n+1"} {
		_, err := h.Enrollment.Invite(ctx, name)
		assert.NoError(t, err, name)
	}
}
