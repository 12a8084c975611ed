package attackkit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewSiteConfig refuses a site without an http(s) URL or a way to
// mint invites, and derives the relying party from the URL by default.
func TestNewSiteConfig(t *testing.T) {
	invite := func(context.Context, string) (string, error) { return "t", nil }
	for _, u := range []string{"", "localhost:8701", "ftp://x", "http://"} {
		_, err := NewSite(SiteConfig{URL: u, Invite: invite})
		assert.Error(t, err, u)
	}
	_, err := NewSite(SiteConfig{URL: "http://localhost:8701"})
	assert.ErrorContains(t, err, "Invite")
	s, err := NewSite(SiteConfig{URL: "http://localhost:8701/", Invite: invite})
	require.NoError(t, err)
	assert.Equal(t, "localhost", s.cfg.RPID)
	assert.Equal(t, "http://localhost:8701", s.cfg.Origin)
	assert.Equal(t, "http://localhost:8701", s.cfg.URL)
	_, err = Remote(RemoteConfig{AgentURL: "not a url", Token: "x", Site: SiteConfig{URL: "http://localhost:8701", Invite: invite}})
	assert.Error(t, err)
}
