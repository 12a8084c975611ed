package exectoken_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestTokenSpendsOnlyWhatExecuteWouldRun: an execution token issued for
// an approval that is then revoked (by an operator, or by revoking the
// passkey that made it), or that was decided under a policy version since
// replaced, must not let the executor run the call, as Gate.Execute would
// not; with no revocation it does (the control). A Verifier that checked
// only the ticket's state spent such a ticket for as long as its token
// lived (DefaultTokenTTL).
func TestTokenSpendsOnlyWhatExecuteWouldRun(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"none", "ticket revoked", "passkey revoked", "policy changed"} {
		t.Run(how, func(t *testing.T) {
			cat, err := policy.NewCatalog("token-attack-1", policy.Tool{Name: "mail", Title: "Mail",
				Class: card.ClassExternal})
			require.NoError(t, err)
			h := stepuptest.NewGate(t, cat, gate.WithExecutor("mail", &stepuptest.Recorder{}))
			pub, key, err := ed25519.GenerateKey(rand.Reader)
			require.NoError(t, err)
			issuer, err := exectoken.NewTokenIssuer(h.Gate, key, "gate.test")
			require.NoError(t, err)

			tk, err := h.Gate.Propose(ctx, stepup.Call{Tool: "mail", Args: json.RawMessage(`{"to":"a@example.com"}`),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
			require.NoError(t, err)
			_, err = h.Approve(tk.ID)
			require.NoError(t, err)
			run, err := h.Gate.Runnable(ctx, tk.ID)
			require.NoError(t, err)
			token, err := issuer.Issue(ctx, tk.ID)
			require.NoError(t, err)

			h.Clock.Advance(time.Second)
			executing := h.Gate
			switch how {
			case "policy changed": // every gate now runs the next catalog version
				next, err := policy.NewCatalog("token-attack-2", policy.Tool{Name: "mail", Title: "Mail",
					Class: card.ClassExternal})
				require.NoError(t, err)
				executing, err = gate.New(h.Store, next, stepuptest.Passkeys(h.Store),
					gate.WithExecutor("mail", &stepuptest.Recorder{}))
				require.NoError(t, err)
			case "ticket revoked":
				_, err = h.Gate.Admin().RevokeTicket(ctx, tk.ID, "user:ops", "mistake")
			case "passkey revoked":
				err = h.Enrollment.RevokeCredential(ctx, h.Authenticator.CredentialIDs()[0], "user:ops", "phone stolen")
			}
			require.NoError(t, err)
			// The mailer's verifier asks a gate of its own, over the same
			// store and the policy the gates now run.
			mailer, err := exectoken.NewVerifier(pub, "gate.test", "mail", h.Store, executing)
			require.NoError(t, err)
			if how == "none" {
				_, err := mailer.Verify(ctx, token, run.Effect)
				require.NoError(t, err, "a live approval's token spends the ticket")
				return
			}
			_, err = executing.Execute(ctx, tk.ID)
			assert.Error(t, err, "the gate itself refuses the approval")
			_, err = mailer.Verify(ctx, token, run.Effect)
			assert.Error(t, err, "the executor spent an approval Gate.Execute refuses, and may run it")
		})
	}
}
