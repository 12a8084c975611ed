package attackkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestToolsServeHTTP records a run reported over HTTP and refuses
// anything else: another method, a body that is not a run, one over the
// bound.
func TestToolsServeHTTP(t *testing.T) {
	tools := &Tools{}
	srv := httptest.NewServer(tools)
	t.Cleanup(srv.Close)
	post := func(body string) int {
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, post(`{"effect":{"tool":"send_email","args":{"to":"a@example.com"},`+
		`"principal":{"user":"user:dana","agent":"agent:reports"}},"key":"k-1"}`))
	runs := tools.Runs()
	require.Len(t, runs, 1)
	assert.Equal(t, "send_email", runs[0].Effect.Tool)
	assert.Equal(t, "k-1", runs[0].Key)
	assert.True(t, runs[0].same(tools.Runs()[0].callOf()))

	for _, bad := range []string{``, `{}`, `[]`, `{"effect":{"args":{}}}`, `{"effect":` + strings.Repeat(" ", maxRunBytes) + `{}}`} {
		assert.Equal(t, http.StatusBadRequest, post(bad), "%.40q", bad)
	}
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Len(t, tools.Runs(), 1, "nothing else was recorded")
}

// callOf is the call r ran, for comparing.
func (r Ran) callOf() stepup.Call {
	return stepup.Call{Tool: r.Effect.Tool, Args: r.Effect.Args, Principal: r.Effect.Principal}
}
