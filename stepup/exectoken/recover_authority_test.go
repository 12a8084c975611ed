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

// TestVerifierRecoverAfterAClockStepDoesNotOverlap: "two executions of one
// ticket never overlap in time", and the gate takes over only a lease it
// then watched go unrenewed for a lease of its own clock, "so a step of
// the database's clock never makes two runs overlap". Verifier.Recover
// takes a run over on the store's word alone: when the database's clock
// steps forward a lease just after executor A spent a token, a second
// replica of the same executor starting up (as the doc says: Recover at
// start-up) is handed A's run at once, while A, by its own clock well
// within its lease, is still running it.
//
// Reproduce: A Verifies; the store's clock jumps DefaultExecutorLease+1s;
// B.Recover returns A's ticket on its first call.
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
