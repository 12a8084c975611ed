package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestPagesOnTheWrongOrigin: an approval or enrollment page opened on
// another host than the relying party's localhost origin (127.0.0.1, ::1,
// another port, another name) says which origin to use and links to the
// same page there, instead of a page whose passkey call the browser
// refuses. The origin itself, in any letter case, gets the page; and an
// origin that is not on this machine (behind a proxy) is never second
// guessed from the Host header.
func TestPagesOnTheWrongOrigin(t *testing.T) {
	const origin = "http://localhost:8701"
	h := stepuptest.NewGate(t, nil)
	rp := passkey.RelyingParty{ID: "localhost", Origin: origin, Name: "asu"}
	enroll, err := passkey.NewEnrollment(h.Store, rp, passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	site, err := gateway.NewSite(h.Gate.Desk(), enroll, rp, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(site)
	defer srv.Close()
	token, err := enroll.Invite(context.Background(), "user:erin")
	require.NoError(t, err)
	enrollPath := "/enroll?invite=" + token

	get := func(host, path string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{enrollPath, "/approve/some-ticket"} {
		for _, host := range []string{"127.0.0.1:8701", "[::1]:8701", "localhost:8702", "127.0.0.2:8701",
			"localhost", "0.0.0.0:8701", "my-laptop:8701", "localhost.:8701"} {
			status, page := get(host, path)
			assert.Equal(t, http.StatusMisdirectedRequest, status, "%s%s", host, path)
			assert.Contains(t, page, "Open this page at "+origin)
			assert.Contains(t, page, `<a href="`+origin+path, "%s%s: links to the same page on the origin", host, path)
			assert.NotContains(t, page, "data-options", "no passkey ceremony on the wrong origin")
		}
		for _, host := range []string{"localhost:8701", "LOCALHOST:8701"} {
			status, page := get(host, path)
			assert.NotEqual(t, http.StatusMisdirectedRequest, status, "%s%s: %s", host, path, page)
		}
	}

	// A public origin behind a proxy that rewrites Host: not second-guessed.
	r := newRig(t, nil)
	status, _ := r.page(t, "/enroll?invite="+mintInvite(t, r, "user:erin"))
	assert.Equal(t, http.StatusOK, status, "origin %s, Host %s", stepuptest.RP().Origin, r.site.URL)
}
