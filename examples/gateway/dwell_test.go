package main

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestOneDwellForGateSiteAndInbox: the inbox page holds its approve
// button for exactly -dwell, the value the gate refuses approvals
// sooner than; -dwell 0 turns both off.
func TestOneDwellForGateSiteAndInbox(t *testing.T) {
	for _, d := range []time.Duration{0, 1500 * time.Millisecond, 3 * time.Second, 10 * time.Second, time.Minute} {
		t.Run(d.String(), func(t *testing.T) {
			g := startGateway(t, options{dwell: d})
			page := get(t, g.InboxURL)
			assert.Contains(t, page, `data-dwell="`+strconv.FormatInt(d.Milliseconds(), 10)+`"`)
		})
	}
}

// TestDwellReachesTheApprovalSite: with -dwell, an approval posted on the
// site right after the card is shown is refused as too fast; with -dwell
// 0 it is accepted.
func TestDwellReachesTheApprovalSite(t *testing.T) {
	for _, tc := range []struct {
		dwell time.Duration
		want  int
	}{{5 * time.Minute, http.StatusTooManyRequests}, {0, http.StatusOK}} {
		g := startGateway(t, options{db: filepath.Join(t.TempDir(), "asu.db"), approver: "user:dana", dwell: tc.dwell})
		passkey := g.enroll(t)
		client, err := remote.NewClient(g.AgentURL, g.Token, nil)
		require.NoError(t, err)
		tk, err := client.Propose(context.Background(), stepup.Call{Tool: "send_email", Session: "s",
			Args:      json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		link := g.Origin + "/approve/" + string(tk.ID)
		pg := get(t, link)
		view, err := json.Marshal(map[string]string{"view": html.UnescapeString(viewAttr.FindStringSubmatch(pg)[1])})
		require.NoError(t, err)
		post(t, link+"/shown", g.Origin, view)
		assertion, err := passkey.Assert(find(t, pg, "approve"))
		require.NoError(t, err)
		got := postStatus(t, link, g.Origin, assertion)
		if tc.want == http.StatusOK {
			assert.Equal(t, tc.want, got, "dwell %s", tc.dwell)
		} else {
			assert.NotEqual(t, http.StatusOK, got, "dwell %s: approved too fast", tc.dwell)
		}
	}
}

var viewAttr = regexp.MustCompile(`data-view="([^"]*)"`)
