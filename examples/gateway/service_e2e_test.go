package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// toolRequest is one request a team's tool received, as Verify read it.
type toolRequest struct {
	httpexec.Request
	err error
}

// teamTools is the team's tool server: every tool at /tools/{tool}, each
// request checked with httpexec.Verify and recorded. write_draft always
// answers 503; search_tickets hangs until the gate gives up.
type teamTools struct {
	*httptest.Server
	secret []byte
	mu     sync.Mutex
	got    map[string][]toolRequest
}

func newTeamTools(t *testing.T, secret []byte) *teamTools {
	tt := &teamTools{secret: secret, got: map[string][]toolRequest{}}
	tt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tool := strings.TrimPrefix(r.URL.Path, "/tools/")
		req, err := httpexec.Verify(r, tool, secret, time.Minute, time.Now())
		tt.mu.Lock()
		tt.got[tool] = append(tt.got[tool], toolRequest{Request: req, err: err})
		tt.mu.Unlock()
		switch {
		case err != nil:
			http.Error(w, "refused", http.StatusUnauthorized)
		case tool == "write_draft":
			w.WriteHeader(http.StatusServiceUnavailable)
		case tool == "search_tickets":
			<-r.Context().Done()
		default:
			_, _ = w.Write([]byte(`{"done":"` + tool + `"}`))
		}
	}))
	t.Cleanup(tt.Close)
	return tt
}

func (tt *teamTools) requests(tool string) []toolRequest {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]toolRequest(nil), tt.got[tool]...)
}

// hooks is a webhook receiver that verifies every notice.
type hooks struct {
	*httptest.Server
	mu      sync.Mutex
	notices []notify.Notice
	errs    []error
}

func newHooks(t *testing.T, secret []byte) *hooks {
	h := &hooks{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := notify.Verify(r, secret, time.Minute, time.Now())
		h.mu.Lock()
		defer h.mu.Unlock()
		if err != nil {
			h.errs = append(h.errs, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.notices = append(h.notices, d.Notice)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hooks) of(id stepup.TicketID) (notify.Notice, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.notices {
		if n.Ticket == string(id) {
			return n, true
		}
	}
	return notify.Notice{}, false
}

// serviceTools are the seed catalog's tools and wire_transfer, which
// needs two people of group finance (the rule of two).
func serviceTools() []policy.Tool {
	return append(stepuptest.SeedTools(), policy.Tool{Name: "wire_transfer", Title: "Wire money", Class: card.ClassIrreversible,
		Approvers: "finance", Quorum: 2})
}

var passkeyLine = regexp.MustCompile(`^(user:\S+)  passkey (\S+)  `)

// TestServiceEndToEnd runs the service as a team would: its own tools
// behind an HTTP tool server, a webhook, approvers enrolled with invites,
// and the admin commands, with the fake authenticator approving over the
// approval site's HTTP endpoints.
func TestServiceEndToEnd(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	toolSecret, hookSecret := bytes.Repeat([]byte("t"), 40), bytes.Repeat([]byte("h"), 40)
	tools := newTeamTools(t, toolSecret)
	hook := newHooks(t, hookSecret)
	secretPath := filepath.Join(dir, "tool.secret")
	require.NoError(t, os.WriteFile(secretPath, append(toolSecret, '\n'), 0o600))
	hookPath := filepath.Join(dir, "hook.secret")
	require.NoError(t, os.WriteFile(hookPath, hookSecret, 0o600))

	o := options{db: db, tools: serviceTools(),
		observe: []gate.Option{gate.WithApproverGroup("finance", "user:dana", "user:erin")}}
	o.svc = serviceOptions{toolSecretFile: secretPath, webhook: hook.URL, webhookSecretFile: hookPath}
	for _, tool := range []string{"read_file", "send_email", "issue_refund", "wire_transfer", "write_draft", "search_tickets"} {
		o.svc.httpTools = append(o.svc.httpTools, HTTPTool{Tool: tool, URL: tools.URL + "/tools/" + tool,
			Timeout: 200 * time.Millisecond, Retries: 2})
	}
	g := startGateway(t, o)
	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	admin := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, cli(ctx, args, &out, &out), "%v", args)
		return out.String()
	}
	invite := func(user string) *stepuptest.Authenticator {
		out := admin("invite", "-db", db, "-origin", g.Origin, "-user", user)
		return enrollLink(t, g.Origin, strings.TrimSpace(out[strings.LastIndex(out, " "):]))
	}
	dana, erin := invite("user:dana"), invite("user:erin")
	call := func(tool, args string) stepup.Call {
		return stepup.Call{Tool: tool, Args: json.RawMessage(args), Session: "sess-e2e",
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	}
	// standing is ticket id's status as it stands, after a 1 ms poll.
	standing := func(t *testing.T, id stepup.TicketID) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.AgentURL+"/v1/tickets/"+string(id)+"/wait?timeout=1ms", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+g.Token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var tk struct{ ID, Status string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&tk))
		require.Equal(t, string(id), tk.ID)
		return tk.Status
	}
	// checkOnce holds that tool received ticket tk's stored effect exactly
	// once, signed, with the key the gate reported.
	checkOnce := func(tool string, tk stepup.Ticket, res stepup.Result) {
		t.Helper()
		got := tools.requests(tool)
		require.Len(t, got, 1, "%s reached once", tool)
		require.NoError(t, got[0].err, "the signature verifies")
		assert.True(t, tk.Digest.Equal(got[0].Digest), "the digest proposed is the digest run")
		d, err := got[0].Effect.Digest()
		require.NoError(t, err)
		assert.True(t, tk.Digest.Equal(d), "the effect received hashes to it")
		assert.Equal(t, res.IdempotencyKey, got[0].IdempotencyKey)
		assert.Equal(t, string(tk.ID), got[0].Ticket)
	}

	t.Run("the agent API serves its OpenAPI document", func(t *testing.T) {
		code, body := status(t, g.AgentURL+gateway.OpenAPIPath)
		require.Equal(t, http.StatusOK, code)
		assert.Equal(t, string(gateway.OpenAPI()), body)
	})

	t.Run("an allowed call reaches the tool once", func(t *testing.T) {
		tk, err := client.Propose(ctx, call("read_file", `{"path":"q3.csv"}`))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, tk.Status)
		res, err := client.Execute(ctx, tk.ID)
		require.NoError(t, err)
		assert.JSONEq(t, `{"done":"read_file"}`, string(res.Output))
		checkOnce("read_file", tk, res)
	})

	t.Run("a gated call waits, is approved, and runs once", func(t *testing.T) {
		tk, err := client.Propose(ctx, call("send_email", `{"to":"finance@example.com","subject":"Q3 <summary> & more","attachment":"q3.csv"}`))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		_, err = client.Execute(ctx, tk.ID)
		require.Error(t, err, "not before a person approves")
		assert.Empty(t, tools.requests("send_email"))
		require.Eventually(t, func() bool { _, ok := hook.of(tk.ID); return ok }, 10*time.Second, 10*time.Millisecond,
			"the webhook fires with a signature the receiver verifies")
		n, _ := hook.of(tk.ID)
		assert.Equal(t, "send_email", n.Tool)
		assert.Equal(t, []string{"user:dana"}, n.Approvers)
		assert.Equal(t, gateway.ApprovalLink(g.Origin, tk.ID), n.Link, "the link is the approval site's page")

		approve(t, g.Origin, dana, tk.ID)
		waited, err := client.Wait(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, stepup.StatusApproved, waited.Status)
		res, err := client.Execute(ctx, tk.ID)
		require.NoError(t, err)
		checkOnce("send_email", tk, res)
		got := tools.requests("send_email")[0]
		assert.JSONEq(t, `{"to":"finance@example.com","subject":"Q3 <summary> & more","attachment":"q3.csv"}`, string(got.Effect.Args))
		require.Len(t, got.Effect.Refs, 1)
		assert.Equal(t, "q3.csv", got.Effect.Refs[0].Name, "references travel resolved, with their content hash")
		assert.NotEmpty(t, got.Effect.Refs[0].SHA256)
		_, err = client.Execute(ctx, tk.ID)
		require.Error(t, err, "an approval runs once")
		assert.Len(t, tools.requests("send_email"), 1)
	})

	t.Run("a failing tool fails the ticket, every attempt with the same key", func(t *testing.T) {
		tk, err := client.Propose(ctx, call("write_draft", `{"to":"x@example.com"}`))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, tk.Status)
		_, err = client.Execute(ctx, tk.ID)
		assert.Equal(t, remote.CodeExecutor, errCode(t, err))
		got := tools.requests("write_draft")
		require.Len(t, got, 3, "tried, then retried twice")
		for _, r := range got {
			require.NoError(t, r.err)
			assert.Equal(t, got[0].IdempotencyKey, r.IdempotencyKey)
		}
		after, err := client.Wait(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusFailed, after.Status)
	})

	t.Run("a hanging tool times out, retried with the same key", func(t *testing.T) {
		tk, err := client.Propose(ctx, call("search_tickets", `{"q":"refund"}`))
		require.NoError(t, err)
		_, err = client.Execute(ctx, tk.ID)
		assert.Equal(t, remote.CodeExecutor, errCode(t, err))
		got := tools.requests("search_tickets")
		require.Len(t, got, 3)
		for _, r := range got {
			assert.Equal(t, got[0].IdempotencyKey, r.IdempotencyKey)
		}
	})

	t.Run("a rule-of-two tool needs two people", func(t *testing.T) {
		tk, err := client.Propose(ctx, call("wire_transfer", `{"to":"DE89370400440532013000","amount":9000}`))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		approve(t, g.Origin, dana, tk.ID)
		assert.Equal(t, string(stepup.StatusPending), standing(t, tk.ID), "one person is not enough")
		_, err = client.Execute(ctx, tk.ID)
		require.Error(t, err)
		assert.Contains(t, admin("tickets", "-db", db), "approved so far by user:dana")
		approve(t, g.Origin, erin, tk.ID)
		res, err := client.Execute(ctx, tk.ID)
		require.NoError(t, err)
		checkOnce("wire_transfer", tk, res)
	})

	t.Run("a revoked passkey no longer approves", func(t *testing.T) {
		// Dana approves one refund, then her passkey is revoked: neither
		// that approval nor a new one runs.
		before, err := client.Propose(ctx, call("issue_refund", `{"order":"A-18","amount":5}`))
		require.NoError(t, err)
		approve(t, g.Origin, dana, before.ID)
		// A second refund's card is open on her phone when it is revoked.
		tk, err := client.Propose(ctx, call("issue_refund", `{"order":"A-19","amount":6}`))
		require.NoError(t, err)
		options := find(t, get(t, g.Origin+"/approve/"+string(tk.ID)), "approve")
		listed := admin("approvers", "-db", db)
		var id string
		for _, l := range strings.Split(listed, "\n") {
			if m := passkeyLine.FindStringSubmatch(l); m != nil && m[1] == "user:dana" {
				id = m[2]
			}
		}
		require.NotEmpty(t, id, listed)
		assert.Contains(t, listed, "approvers: 2 people with passkeys, 2 active passkeys, 0 revoked")
		out := admin("revoke-passkey", "-db", db, "-id", id, "-reason", "phone lost")
		assert.Equal(t, "revoked passkey "+id+" of user:dana: it approves nothing from now on, and its approvals that have not run never run\n", out)
		assert.Contains(t, admin("approvers", "-db", db), "1 active passkeys, 1 revoked")

		_, err = client.Execute(ctx, before.ID)
		require.Error(t, err, "an approval by a revoked passkey does not run")
		assertion, err := dana.Assert(options)
		require.NoError(t, err)
		code := postStatus(t, g.Origin+"/approve/"+string(tk.ID), g.Origin, assertion)
		assert.Contains(t, []int{http.StatusForbidden, http.StatusGone}, code, "the revoked passkey is refused")
		code, page := status(t, g.Origin+"/approve/"+string(tk.ID))
		assert.Equal(t, http.StatusForbidden, code)
		assert.Contains(t, page, "Nobody who may approve this request has a passkey enrolled")
		assert.Equal(t, string(stepup.StatusPending), standing(t, tk.ID))
		assert.Empty(t, tools.requests("issue_refund"), "no refund ever ran")
	})

	t.Run("the audit chain exports", func(t *testing.T) {
		file := filepath.Join(dir, "audit.jsonl")
		out := admin("audit", "-db", db, "-out", file)
		assert.Contains(t, out, "audit chain: ")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "DE89370400440532013000", "arguments are in the chain by digest only")
	})
	hook.mu.Lock()
	assert.Empty(t, hook.errs, "every notice verified")
	hook.mu.Unlock()
}

// postStatus posts body as the site's page would and returns the status.
func postStatus(t *testing.T, u, origin string, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, u, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// errCode returns the code of an agent API refusal.
func errCode(t *testing.T, err error) string {
	t.Helper()
	var e *remote.Error
	require.ErrorAs(t, err, &e)
	return e.Code
}
