package passkey_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// TestBeginEnrollRefusesBadInvites checks that BeginEnroll refuses, before
// any registration options are made, every invite FinishEnroll would refuse.
func TestBeginEnrollRefusesBadInvites(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// token returns the token to begin with, after putting the gate in
		// the state under test.
		token func(t *testing.T, h *stepuptest.Harness) string
		want  error
	}{
		{"honest invite", func(t *testing.T, h *stepuptest.Harness) string {
			return invite(t, h, "user:erin")
		}, nil},
		{"a second before expiry", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			h.Clock.Advance(24*time.Hour - time.Second)
			return token
		}, nil},
		{"unknown invite", func(t *testing.T, h *stepuptest.Harness) string {
			return b64(make([]byte, 32)) + "." + b64([]byte("user:erin"))
		}, passkey.ErrInvite},
		{"malformed token", func(t *testing.T, h *stepuptest.Harness) string {
			return "not-a-token"
		}, passkey.ErrInvite},
		{"already redeemed", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			require.NoError(t, register(h, token))
			return token
		}, passkey.ErrInvite},
		{"expired at its deadline", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			h.Clock.Advance(24 * time.Hour)
			return token
		}, passkey.ErrInvite},
		{"expired long ago", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			h.Clock.Advance(30 * 24 * time.Hour)
			return token
		}, passkey.ErrInvite},
		{"secret reused with another user's name", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			return token[:43] + "." + b64([]byte("user:mallory"))
		}, passkey.ErrInvite},
		{"stored invite minted for another user", func(t *testing.T, h *stepuptest.Harness) string {
			// A token whose hash is stored for erin but whose user part
			// names mallory: only the user check refuses it.
			token := b64(make([]byte, 32)) + "." + b64([]byte("user:mallory"))
			now := h.Clock.Now()
			require.NoError(t, h.Store.CreateInvite(ctx, store.Invite{
				TokenHash: sha256.Sum256([]byte(token)), User: "user:erin",
				CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
			return token
		}, passkey.ErrInvite},
		{"store closed", func(t *testing.T, h *stepuptest.Harness) string {
			token := invite(t, h, "user:erin")
			require.NoError(t, h.Store.Close())
			return token
		}, stepup.ErrStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil)
			token := tt.token(t, h)
			opts, err := h.Enrollment.BeginEnroll(ctx, token)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Nil(t, opts, "no registration options for a refused invite")
				assert.NotContains(t, err.Error(), token, "the error does not echo the token")
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, opts)
			resp, err := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin).Register(opts)
			require.NoError(t, err)
			_, err = h.Enrollment.FinishEnroll(ctx, token, resp)
			assert.NoError(t, err, "an honest invite still enrolls")
		})
	}
}

// TestBeginEnrollDoesNotDecide checks that BeginEnroll's lookup neither
// spends the invite nor replaces FinishEnroll's redeem: an invite that is
// used or expires after BeginEnroll is still refused at FinishEnroll.
func TestBeginEnrollDoesNotDecide(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// between runs after both enrollments have begun and the first has
		// registered, before the second finishes.
		between func(t *testing.T, h *stepuptest.Harness, token string, first []byte)
		want    error
	}{
		{"nothing between: begin does not spend the invite", func(*testing.T, *stepuptest.Harness, string, []byte) {}, nil},
		{"redeemed by a concurrent enrollment", func(t *testing.T, h *stepuptest.Harness, token string, first []byte) {
			_, err := h.Enrollment.FinishEnroll(ctx, token, first)
			require.NoError(t, err)
		}, passkey.ErrInvite},
		{"expired after begin", func(t *testing.T, h *stepuptest.Harness, _ string, _ []byte) {
			h.Clock.Advance(24 * time.Hour)
		}, passkey.ErrInvite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := stepuptest.NewGate(t, nil)
			token := invite(t, h, "user:erin")
			begin := func() []byte {
				opts, err := h.Enrollment.BeginEnroll(ctx, token)
				require.NoError(t, err)
				resp, err := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin).Register(opts)
				require.NoError(t, err)
				return resp
			}
			first, second := begin(), begin()
			tt.between(t, h, token, first)
			_, err := h.Enrollment.FinishEnroll(ctx, token, second)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			} else {
				assert.NoError(t, err)
			}
			creds, err := h.Store.CredentialsByUser(ctx, "user:erin")
			require.NoError(t, err)
			assert.LessOrEqual(t, len(creds), 1, "one invite enrolls at most one credential")
		})
	}
}

func invite(t *testing.T, h *stepuptest.Harness, user string) string {
	t.Helper()
	token, err := h.Enrollment.Invite(context.Background(), user)
	require.NoError(t, err)
	return token
}
