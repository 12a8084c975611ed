package gateway_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestEnrollPageRefusesBadInvites: the enrollment page of an invite that
// cannot enroll (unknown, used, expired, or naming another user) is the
// site's notice with 403, without registration options and without the
// token in the page or the log; an honest invite still gets the page.
func TestEnrollPageRefusesBadInvites(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// token returns the invite to open, after putting the gate in the
		// state under test.
		token  func(t *testing.T, r *rig) string
		status int
	}{
		{"honest invite", func(t *testing.T, r *rig) string {
			return mintInvite(t, r, "user:erin")
		}, http.StatusOK},
		{"unknown invite", func(t *testing.T, r *rig) string {
			return strings.Repeat("A", 43) + ".dXNlcjplcmlu" // 32 zero bytes . "user:erin"
		}, http.StatusForbidden},
		{"malformed invite", func(t *testing.T, r *rig) string {
			return "not-an-invite"
		}, http.StatusForbidden},
		{"used invite", func(t *testing.T, r *rig) string {
			token := mintInvite(t, r, "user:erin")
			opts, err := r.Enrollment.BeginEnroll(ctx, token)
			require.NoError(t, err)
			reg, err := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin).Register(opts)
			require.NoError(t, err)
			_, err = r.Enrollment.FinishEnroll(ctx, token, reg)
			require.NoError(t, err)
			return token
		}, http.StatusForbidden},
		{"expired invite", func(t *testing.T, r *rig) string {
			token := mintInvite(t, r, "user:erin")
			r.Clock.Advance(24 * time.Hour)
			return token
		}, http.StatusForbidden},
		{"secret with another user's name", func(t *testing.T, r *rig) string {
			token := mintInvite(t, r, "user:erin")
			return token[:43] + ".dXNlcjptYWxsb3J5" // "user:mallory"
		}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			var log bytes.Buffer
			site, err := gateway.NewSite(r.Gate.Desk(), r.Enrollment, stepuptest.RP(),
				&gateway.SiteOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			require.NoError(t, err)
			token := tt.token(t, r)

			// Served in the test's goroutine, so the log is read after the
			// handler wrote it.
			w := httptest.NewRecorder()
			site.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/enroll?invite="+url.QueryEscape(token), nil))
			page := w.Body.String()

			assert.Equal(t, tt.status, w.Code)
			assert.True(t, strings.HasPrefix(w.Header().Get("Content-Type"), "text/html"), w.Header().Get("Content-Type"))
			assert.Equal(t, gateway.CSP, w.Header().Get("Content-Security-Policy"))
			if tt.status == http.StatusOK {
				assert.Contains(t, page, "user:erin")
				assert.Regexp(t, optionsAttr, page, "the page carries registration options")
				return
			}
			assert.Contains(t, page, "Cannot continue")
			assert.Contains(t, page, "already used or expired")
			assert.NotRegexp(t, optionsAttr, page, "no registration options for a refused invite")
			secret, _, _ := strings.Cut(token, ".")
			for _, s := range []string{token, url.QueryEscape(token), secret} {
				assert.NotContains(t, page, s, "the notice does not echo the invite")
				assert.NotContains(t, log.String(), s, "the log does not record the invite")
			}
			assert.Contains(t, log.String(), gateway.CodeInvite, "the refusal is logged by its code")
		})
	}
}

func mintInvite(t *testing.T, r *rig, user string) string {
	t.Helper()
	link, err := gateway.InviteLink(context.Background(), r.Enrollment, r.site.URL, user)
	require.NoError(t, err)
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.Query().Get("invite")
}
