package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestSiteWords: every refusal the approval site can meet, the new
// revoked, policy-changed and outcome-unknown ones included, reaches the
// person as a sentence of its own, in posts and in pages, and never as a
// sentinel's text or a store's detail.
func TestSiteWords(t *testing.T) {
	errs := []error{
		stepup.ErrNotFound, stepup.ErrNotApproved, stepup.ErrConsumed, stepup.ErrExpired, stepup.ErrRevoked,
		stepup.ErrResolved, stepup.ErrPolicyChanged, stepup.ErrEffectChanged, stepup.ErrBadAssertion,
		stepup.ErrNotPermitted, stepup.ErrOutcomeUnknown, stepup.ErrStore, stepup.ErrConfig,
		remote.ErrForbidden, remote.ErrInvalid, remote.ErrTooLarge, context.Canceled,
		passkey.ErrUnknownCredential, passkey.ErrCounter, passkey.ErrInvite, plug.ErrMisbehaved,
		errors.New("open /var/lib/asu/asu.db: disk full"),
	}
	s := &Site{log: logger(nil)}
	seen := map[string]string{}
	for _, e := range errs {
		err := fmt.Errorf("approve: %w: /var/lib/asu/secret", e)
		code, _, _ := classify(err)
		w := httptest.NewRecorder()
		s.refuse(w, "approve", "t1", err)
		var got siteError
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got), "%v", e)
		msg := got.Error.Message
		assert.Equal(t, code, got.Error.Code)
		assert.NotEmpty(t, msg, "%v", e)
		assert.NotContains(t, msg, "stepup:", "%v: a sentence, not a sentinel", e)
		assert.NotContains(t, msg, "/var/lib", "%v", e)
		if code != remote.CodeInternal {
			if prev, dup := seen[msg]; dup && prev != code {
				t.Errorf("%s and %s say the same: %q", prev, code, msg)
			}
			seen[msg] = code
		}

		w = httptest.NewRecorder()
		s.refusedPage(w, err)
		page := w.Body.String()
		assert.NotContains(t, page, "stepup:", "%v", e)
		assert.NotContains(t, page, "/var/lib", "%v", e)
		assert.NotContains(t, page, "cannot be shown", "%v: every known refusal has its own words", e)
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{stepup.ErrRevoked, "revoked. It will never run"},
		{stepup.ErrPolicyChanged, "rules changed"},
		{stepup.ErrOutcomeUnknown, "may have run"},
		{stepup.ErrExpired, "expired"},
	} {
		w := httptest.NewRecorder()
		s.refuse(w, "approve", "t1", tt.err)
		assert.Contains(t, w.Body.String(), tt.want)
		w = httptest.NewRecorder()
		s.refusedPage(w, tt.err)
		assert.Contains(t, w.Body.String(), tt.want)
	}
	for status, text := range verdicts {
		assert.NotEqual(t, stepup.StatusPending, status)
		assert.False(t, strings.Contains(text, "stepup"), text)
	}
}
