package exectoken_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/store"
)

// TestVerifierRecoverRunsOnlyWhatExecuteWould: a run the executor spent,
// whose approving passkey is revoked while the executor is down, is not
// handed back to run by the restarted executor (Recover asks its
// Checker's Holds, as Gate.Recover re-verifies an interrupted run's
// evidence); with nothing revoked it is (the control).
func TestVerifierRecoverRunsOnlyWhatExecuteWould(t *testing.T) {
	ctx := context.Background()
	revocations := map[string]func(w *tokenWorld) error{
		"nothing revoked (the control)": func(*tokenWorld) error { return nil },
		"approving passkey revoked": func(w *tokenWorld) error {
			return w.Enrollment.RevokeCredential(ctx, w.Authenticator.CredentialIDs()[0], "user:ops", "phone stolen")
		},
	}
	for name, revoke := range revocations {
		t.Run(name, func(t *testing.T) {
			w := newTokenWorld(t)
			call := sendEmail("finance@example.com")
			tk, tok := w.issued(t, call)
			_, err := w.mailer.Verify(ctx, tok, effectOf(call))
			require.NoError(t, err)
			require.Equal(t, store.Executing, w.state(t, tk.ID))
			// The executor crashes before it sends; while it is down the
			// approval's authority is withdrawn.
			require.NoError(t, revoke(w))
			w.Clock.Advance(exectoken.DefaultExecutorLease + time.Second)

			restarted := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "send_email")
			_, _ = restarted.Recover(ctx) // starts the watch
			w.Clock.Advance(exectoken.DefaultExecutorLease)
			got, err := restarted.Recover(ctx)
			if name == "nothing revoked (the control)" {
				require.NoError(t, err)
				require.Len(t, got, 1, "the control: an interrupted run comes back, so the check below can fail")
				return
			}
			for _, in := range got {
				assert.NotEqual(t, tk.ID, in.Claims.Ticket,
					"Recover handed back to run a ticket whose approving passkey was revoked")
			}
			_, verr := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "send_email").Verify(ctx, tok, effectOf(call))
			assert.Error(t, verr, "and Verify refuses it")
		})
	}
}

// TestVerifierRecoverAfterAClockStepDoesNotOverlap: two executions of one
// ticket never overlap in time. When the database's clock steps forward a
// lease just after executor A spent a token, a second replica starting up
// is not handed A's run on the store's word alone: it first watches the
// lease go unrenewed for a lease of its own clock.
func TestVerifierRecoverAfterAClockStepDoesNotOverlap(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	_, err := w.mailer.Verify(ctx, tok, effectOf(call)) // A runs it now
	require.NoError(t, err)
	w.Clock.Advance(exectoken.DefaultExecutorLease + time.Second) // the database's clock steps
	b := w.verifier(t, w.issuer.PublicKey(), tokenIssuerName, "send_email")
	got, err := b.Recover(ctx)
	require.NoError(t, err)
	for _, in := range got {
		assert.NotEqual(t, tk.ID, in.Claims.Ticket,
			"a second executor took over a run on a clock step alone, while its owner may still be running it")
	}
}
