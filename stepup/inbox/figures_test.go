package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestFiguresTellTheApproverAboutThemselves: with Options.Figures, the
// session answer carries the signed-in approver's own figures (and the
// rubber-stamp warning once they approve nearly everything within
// seconds), and Prefix/figures adds the figures by class and overall,
// never another approver's row; without it there are none.
func TestFiguresTellTheApproverAboutThemselves(t *testing.T) {
	ctx := context.Background()
	var r *rig
	r = newRig(t, &inbox.Options{Poll: 10 * time.Millisecond, Figures: func(ctx context.Context) (figures.Report, error) {
		return r.Gate.Admin().Metrics(ctx, 24*time.Hour)
	}})
	for i := range 20 {
		id := r.propose(t, fmt.Sprintf("finance+%d@example.com", i))
		r.Clock.Advance(time.Second)
		_, err := stepuptest.Approve(ctx, r.Gate.Desk(), r.erin, id)
		require.NoError(t, err)
		r.Clock.Advance(4 * time.Minute) // within the flood limits (20 an hour per agent)
	}
	id := r.propose(t, "finance+x@example.com")
	_, err := stepuptest.Approve(ctx, r.Gate.Desk(), r.finn, id)
	require.NoError(t, err)

	cookie := r.signIn(t, r.erin)
	resp, body := r.do(t, req{method: "GET", path: "/inbox/session", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var s struct {
		Figures struct {
			Approved    int     `json:"approved"`
			Rate        float64 `json:"approval_rate"`
			Median      int64   `json:"median_decision_ms"`
			RubberStamp bool    `json:"rubber_stamp"`
		} `json:"figures"`
	}
	require.NoError(t, json.Unmarshal(body, &s))
	assert.Equal(t, 20, s.Figures.Approved)
	assert.Equal(t, 1.0, s.Figures.Rate)
	assert.Equal(t, int64(1000), s.Figures.Median)
	assert.True(t, s.Figures.RubberStamp)

	resp, body = r.do(t, req{method: "GET", path: "/inbox/figures", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), "user:finn", "no other approver's row")
	var all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &all))
	assert.Contains(t, all, "by_class")
	resp, _ = r.do(t, req{method: "GET", path: "/inbox/figures"})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "figures need a session")

	plain := newRig(t, nil)
	cookie = plain.signIn(t, plain.erin)
	_, body = plain.do(t, req{method: "GET", path: "/inbox/session", cookie: cookie})
	assert.NotContains(t, string(body), "figures")
	resp, _ = plain.do(t, req{method: "GET", path: "/inbox/figures", cookie: cookie})
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
