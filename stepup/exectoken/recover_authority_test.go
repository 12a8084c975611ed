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

// TestVerifierRecoverRunsOnlyWhatExecuteWould: "a token spends its ticket
// only if Execute would run it now", and Gate.Recover re-verifies an
// interrupted run's evidence before it runs it again. Verifier.Recover
// asks its Checker nothing: a ticket the executor spent, whose approving
// passkey (or the approval itself) is revoked while the executor is down,
// is handed back to run by the restarted executor, although Verify would
// now refuse the token and the gate would not run it.
//
// Reproduce: Verify a token, revoke Dana's passkey, let the executor's
// lease expire, call Recover on a restarted Verifier: the ticket comes
// back to run.
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
