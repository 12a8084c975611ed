package gate_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// reasonsOfEveryKind are texts a person may type or paste as a reason.
var reasonsOfEveryKind = map[string]string{
	"invalid UTF-8":   "stop \xff\xfe",
	"cut rune":        "stop " + string([]byte("é")[:1]),
	"nul":             "no\x00way",
	"controls":        "no\r\nway\t\x1b[31m",
	"bidi":            "pay \u202eevil\u202c",
	"line separator":  "one\u2028two",
	"long":            strings.Repeat("no. ", 20000),
	"long multibyte":  strings.Repeat("é", 5000) + "\xff",
	"only controls":   "\x00\x01\u200b",
	"plain":           "the amount is wrong",
	"empty":           "",
	"surrogate bytes": "\xed\xa0\x80",
}

// TestReasonNeverDecides: whatever text a person gives as the reason (or
// as who acts), a denial, a revocation of a ticket by its approver or an
// operator, a grant's and a passkey's revocation, an invite's and an
// agent's cancellation are made, and the audit row keeps the text as one
// line of valid UTF-8 of bounded length.
func TestReasonNeverDecides(t *testing.T) {
	ctx := context.Background()
	entries := map[string]func(t *testing.T, w *world, reason string) error{
		"Desk.Deny": func(t *testing.T, w *world, reason string) error {
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			got, err := w.Deny(tk.ID, reason)
			if err == nil {
				assert.Equal(t, stepup.StatusDenied, got.Status)
			}
			return err
		},
		"Desk.Revoke": func(t *testing.T, w *world, reason string) error {
			id := approvedEmail(t, w)
			p, err := w.Gate.Desk().RevokePrompt(ctx, id)
			require.NoError(t, err)
			ans, err := w.Authenticator.Assert(p.DenyOptions)
			require.NoError(t, err)
			got, err := w.Gate.Desk().Revoke(ctx, id, ans, reason)
			if err == nil {
				assert.Equal(t, stepup.StatusRevoked, got.Status)
			}
			return err
		},
		"Admin.RevokeTicket": func(t *testing.T, w *world, reason string) error {
			_, err := w.Gate.Admin().RevokeTicket(ctx, approvedEmail(t, w), "user:ops "+reason, reason)
			return err
		},
		"Admin.RevokeGrant": func(t *testing.T, w *world, reason string) error {
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			id, err := w.Grant(gate.GrantSpec{Grant: grant.Exact(tk.Digest), Uses: 1, ExpiresAt: w.Clock.Now().Add(time.Hour)})
			require.NoError(t, err)
			return w.Gate.Admin().RevokeGrant(ctx, id, "user:ops "+reason, reason)
		},
		"Enrollment.RevokeCredential": func(t *testing.T, w *world, reason string) error {
			return w.Enrollment.RevokeCredential(ctx, w.Authenticator.CredentialIDs()[0], "user:ops "+reason, reason)
		},
		"Enrollment.RevokeInvite": func(t *testing.T, w *world, reason string) error {
			token, err := w.Enrollment.Invite(ctx, "user:erin")
			require.NoError(t, err)
			return w.Enrollment.RevokeInvite(ctx, token, "user:ops "+reason)
		},
		"Gate.Cancel": func(t *testing.T, w *world, reason string) error {
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			_, err = w.Gate.Cancel(ctx, tk.ID, reason)
			return err
		},
	}
	for entry, do := range entries {
		for kind, reason := range reasonsOfEveryKind {
			t.Run(entry+"/"+kind, func(t *testing.T) {
				w := newWorld(t)
				require.NoError(t, do(t, w, reason), "the reason decided whether it was made")
				head, err := w.Store.AuditHead(ctx)
				require.NoError(t, err)
				assert.True(t, utf8.ValidString(head.Reason))
				assert.LessOrEqual(t, len(head.Reason), 1600, "a reason is a short text")
				assert.False(t, strings.ContainsFunc(head.Reason, func(r rune) bool {
					return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
				}), "%q", head.Reason)
			})
		}
	}
}

// approvedEmail proposes an e-mail and approves it.
func approvedEmail(t *testing.T, w *world) stepup.TicketID {
	t.Helper()
	tk, err := w.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Approve(tk.ID)
	require.NoError(t, err)
	return tk.ID
}
