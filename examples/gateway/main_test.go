package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

var attr = regexp.MustCompile(`data-(options|approve)="([^"]*)"`)

// TestGateway runs the command on free ports and goes through the whole
// deployment: the printed enrollment link enrolls a passkey, a runtime
// with the printed token proposes send_email, the printed approval link
// approves it, and it executes once; then the command stops on its
// context.
func TestGateway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	w := &syncWriter{w: &out}
	var logs bytes.Buffer // written by the servers' goroutines; read after they stop
	ready := make(chan started, 1)
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "asu.db")
	go func() {
		done <- run(ctx, w, options{agentAddr: "127.0.0.1:0", siteAddr: "127.0.0.1:0", db: db,
			approver: "user:dana", agent: "agent:reports", user: "user:dana", log: &logs}, func(s started) { ready <- s })
	}()
	var s started
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatalf("gateway did not start: %v", err)
	}
	require.True(t, strings.HasPrefix(s.Origin, "http://localhost:"), s.Origin)
	siteURL := s.SiteURL
	passkey := stepuptest.NewAuthenticator("localhost", s.Origin)

	// Enroll with the printed link.
	inv, err := url.Parse(s.InviteLink)
	require.NoError(t, err)
	page := get(t, siteURL+"/enroll?"+inv.RawQuery)
	reg, err := passkey.Register(find(t, page, "options"))
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"invite": inv.Query().Get("invite"), "credential": json.RawMessage(reg)})
	require.NoError(t, err)
	post(t, siteURL+"/enroll", s.Origin, body)

	// A runtime proposes; the approver approves on the site.
	client, err := remote.NewClient(s.AgentURL, s.Token, nil)
	require.NoError(t, err)
	tk, err := client.Propose(ctx, stepup.Call{Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	assertion, err := passkey.Assert(find(t, get(t, siteURL+"/approve/"+string(tk.ID)), "approve"))
	require.NoError(t, err)
	post(t, siteURL+"/approve/"+string(tk.ID), s.Origin, assertion)
	got, err := client.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	res, err := client.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok":true,"tool":"send_email"}`, string(res.Output))
	_, err = client.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrConsumed)

	cancel()
	require.NoError(t, <-done)
	w.mu.Lock()
	printed := out.String()
	w.mu.Unlock()
	assert.Contains(t, printed, "approval needed: "+s.Origin+"/approve/"+string(tk.ID))
	assert.Equal(t, 1, strings.Count(printed, "executed send_email digest "+tk.Digest.Short()))
	for _, line := range strings.Split(printed, "\n") {
		if strings.HasPrefix(line, "executed") {
			assert.NotContains(t, line, "finance@example.com", "executions are printed by digest, not by argument")
		}
	}
	assert.NotContains(t, logs.String(), "finance@example.com", "the service logs digests, never arguments")
	assert.Contains(t, logs.String(), tk.Digest.String())
	assert.Contains(t, printed, "gateway stopped")

	// The operator exports the audit chain; it verifies on its own and
	// counts the one approval.
	exported := filepath.Join(t.TempDir(), "audit.jsonl")
	var report bytes.Buffer
	require.NoError(t, run(context.Background(), &report, options{db: db, audit: exported, log: io.Discard}, nil))
	assert.Contains(t, report.String(), "1 asked, 1 approvals and 0 denials by people")
	f, err := os.Open(exported)
	require.NoError(t, err)
	defer f.Close()
	records, err := audit.ReadChain(f)
	require.NoError(t, err)
	require.NotEmpty(t, records)
	assert.NoError(t, audit.VerifyChain(records, [32]byte{}))
	assert.Error(t, run(context.Background(), io.Discard, options{db: db, audit: exported, log: io.Discard}, nil),
		"an export never overwrites a file")
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

func post(t *testing.T, u, origin string, body []byte) {
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
}

func find(t *testing.T, page, name string) []byte {
	t.Helper()
	for _, m := range attr.FindAllStringSubmatch(page, -1) {
		if m[1] == name {
			return []byte(html.UnescapeString(m[2]))
		}
	}
	t.Fatalf("no data-%s on the page", name)
	return nil
}
