package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestInboxIsServed: the gateway serves the approvers' inbox on the
// approval site's listener and origin and prints where. An enrolled
// approver signs in with the passkey, a proposed call arrives on the
// inbox's stream, its entry's options approve it on the approval site,
// and the gateway stops at once with the stream still open.
func TestInboxIsServed(t *testing.T) {
	g := startGateway(t, options{db: filepath.Join(t.TempDir(), "asu.db"), approver: "user:dana"})
	require.Equal(t, g.Origin+"/inbox/", g.InboxURL)
	assert.Contains(t, g.printed(), "inbox:         "+g.InboxURL)
	passkey := g.enroll(t)

	resp, err := http.Get(g.InboxURL)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, gateway.CSP, resp.Header.Get("Content-Security-Policy"))
	assert.Contains(t, string(page), `<script src="/inbox/static/inbox.js"></script>`)
	assert.Contains(t, get(t, g.Origin+"/inbox/static/inbox.js"), "EventSource")

	// Sign in as the page does.
	var begin struct {
		Options json.RawMessage `json:"options"`
		State   string          `json:"state"`
	}
	require.NoError(t, json.Unmarshal(postJSON(t, g.Origin+"/inbox/signin/begin", g.Origin, nil).body, &begin))
	answer, err := passkey.Assert(begin.Options)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"state": begin.State, "credential": json.RawMessage(answer)})
	require.NoError(t, err)
	signedIn := postJSON(t, g.Origin+"/inbox/signin", g.Origin, body)
	require.Len(t, signedIn.cookies, 1)
	cookie := signedIn.cookies[0]
	assert.Equal(t, "asu-inbox", cookie.Name, "http://localhost: no __Host- prefix without TLS")
	assert.True(t, cookie.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookie.SameSite)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.Origin+"/inbox/events", nil)
	require.NoError(t, err)
	req.AddCookie(cookie)
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)
	events := bufio.NewReader(stream.Body)
	assert.Empty(t, nextQueue(t, events), "nothing to decide yet")

	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	tk, err := client.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	entries := nextQueue(t, events)
	require.Len(t, entries, 1, "the call arrives on the stream")
	assert.Equal(t, string(tk.ID), entries[0].ID)
	assert.Equal(t, "/approve/"+string(tk.ID), entries[0].Link)

	assertion, err := passkey.Assert(entries[0].Approve)
	require.NoError(t, err)
	post(t, g.Origin+entries[0].Link, g.Origin, assertion)
	got, err := client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
	assert.Empty(t, nextQueue(t, events), "and leaves it once approved")

	g.stop(t) // the open stream does not hold the shutdown up
	_, err = io.Copy(io.Discard, events)
	assert.NoError(t, err, "the stream ended cleanly")
}

type posted struct {
	body    []byte
	cookies []*http.Cookie
}

// postJSON posts body from origin and requires a 200.
func postJSON(t *testing.T, u, origin string, body []byte) posted {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return posted{body: b, cookies: resp.Cookies()}
}

type inboxEntry struct {
	ID      string          `json:"id"`
	Link    string          `json:"link"`
	Approve json.RawMessage `json:"approve"`
}

// nextQueue reads server-sent events until a queue event, and returns
// its entries.
func nextQueue(t *testing.T, r *bufio.Reader) []inboxEntry {
	t.Helper()
	name := ""
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && name == "queue":
			var q struct {
				Entries []inboxEntry `json:"entries"`
			}
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &q))
			return q.Entries
		case line == "":
			name = ""
		}
	}
}
