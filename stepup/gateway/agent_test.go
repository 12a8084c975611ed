package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

const goodCall = `{"tool":"send_email","args":{"to":"finance@example.com"},"session":"s","principal":{"user":"user:dana","agent":"agent:reports"}}`

// TestAgentAPIRefusals: every request the agent API must refuse, with the
// status, the stable code, and the sentinel the client maps it back to.
func TestAgentAPIRefusals(t *testing.T) {
	r := newRig(t, nil)
	pending, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no token", "POST", "/v1/propose", "", goodCall, 401, remote.CodeUnauthorized},
		{"unknown token", "POST", "/v1/propose", strings.Repeat("x", 48), goodCall, 401, remote.CodeUnauthorized},
		{"token as a prefix", "POST", "/v1/propose", agentToken[:40], goodCall, 401, remote.CodeUnauthorized},
		{"wait without token", "GET", "/v1/tickets/" + string(pending.ID) + "/wait", "", "", 401, remote.CodeUnauthorized},
		{"execute without token", "POST", "/v1/tickets/" + string(pending.ID) + "/execute", "", "", 401, remote.CodeUnauthorized},
		{"another agent's call", "POST", "/v1/propose", otherToken, goodCall, 403, remote.CodeForbidden},
		{"a user the token does not act for", "POST", "/v1/propose", agentToken,
			strings.Replace(goodCall, `"user:dana"`, `"user:fay"`, 1), 403, remote.CodeForbidden},
		{"no agent named", "POST", "/v1/propose", agentToken,
			`{"tool":"send_email","args":{},"session":"s","principal":{"user":"user:dana"}}`, 403, remote.CodeForbidden},
		{"unknown field", "POST", "/v1/propose", agentToken,
			strings.Replace(goodCall, `"session"`, `"approved":true,"session"`, 1), 400, remote.CodeInvalid},
		{"Go field names are not the wire format", "POST", "/v1/propose", agentToken,
			`{"Tool":"send_email","Args":{},"Session":"s","Principal":{"User":"user:dana","Agent":"agent:reports"}}`, 400, remote.CodeInvalid},
		{"duplicate key", "POST", "/v1/propose", agentToken,
			strings.Replace(goodCall, `"principal"`, `"principal":{"agent":"agent:billing"},"principal"`, 1), 400, remote.CodeInvalid},
		{"duplicate key in arguments", "POST", "/v1/propose", agentToken,
			strings.Replace(goodCall, `"to":`, `"to":"a@example.com","to":`, 1), 400, remote.CodeInvalid},
		{"trailing data", "POST", "/v1/propose", agentToken, goodCall + `{}`, 400, remote.CodeInvalid},
		{"not JSON", "POST", "/v1/propose", agentToken, `tool=send_email`, 400, remote.CodeInvalid},
		{"oversized body", "POST", "/v1/propose", agentToken,
			`{"tool":"send_email","args":{"body":"` + strings.Repeat("a", gateway.MaxCallBytes) + `"}}`, 413, remote.CodeTooLarge},
		{"execute with arguments", "POST", "/v1/tickets/" + string(pending.ID) + "/execute", agentToken,
			`{"to":"attacker@example.net"}`, 400, remote.CodeInvalid},
		{"another agent's ticket: wait", "GET", "/v1/tickets/" + string(pending.ID) + "/wait", otherToken, "", 404, remote.CodeNotFound},
		{"another agent's ticket: execute", "POST", "/v1/tickets/" + string(pending.ID) + "/execute", otherToken, "", 404, remote.CodeNotFound},
		{"unknown ticket", "GET", "/v1/tickets/nope/wait", agentToken, "", 404, remote.CodeNotFound},
		{"bad timeout", "GET", "/v1/tickets/" + string(pending.ID) + "/wait?timeout=-1s", agentToken, "", 400, remote.CodeInvalid},
		{"approval route", "GET", "/approve/" + string(pending.ID), agentToken, "", 404, remote.CodeNotFound},
		{"approval post", "POST", "/approve/" + string(pending.ID), agentToken, "{}", 404, remote.CodeNotFound},
		{"enrollment", "GET", "/enroll?invite=x", agentToken, "", 404, remote.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(tt.method, r.api.URL+tt.path, body)
			require.NoError(t, err)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var e struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.code, e.Error.Code)
			assert.NotContains(t, e.Error.Message, "finance@example.com", "refusals never quote arguments")
		})
	}
	got, err := r.Gate.Ticket(context.Background(), pending.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, got.Status, "no refused request changed the ticket")
	assert.Zero(t, r.exec.count())
}

// TestClientMapsRefusalsToSentinels: the client's errors satisfy
// errors.Is with the same sentinels as the gate's.
func TestClientMapsRefusalsToSentinels(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	bad, err := remote.NewClient(r.api.URL, strings.Repeat("x", 48), nil)
	require.NoError(t, err)
	_, err = bad.Propose(ctx, sendEmail("finance@example.com"))
	assert.ErrorIs(t, err, remote.ErrUnauthorized)

	other, err := remote.NewClient(r.api.URL, otherToken, nil)
	require.NoError(t, err)
	_, err = other.Propose(ctx, sendEmail("finance@example.com"))
	assert.ErrorIs(t, err, remote.ErrForbidden)

	tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = other.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNotFound, "another agent's ticket does not exist for this one")
	_, err = r.client.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrNotApproved)
	_, err = r.client.Wait(ctx, "no-such-ticket")
	assert.ErrorIs(t, err, stepup.ErrNotFound)

	big := sendEmail("finance@example.com")
	big.Args = json.RawMessage(`{"to":"finance@example.com","body":"` + strings.Repeat("a", gateway.MaxCallBytes) + `"}`)
	_, err = r.client.Propose(ctx, big)
	assert.ErrorIs(t, err, remote.ErrTooLarge)
}

// TestWaitIsBounded: a long poll ends at the server's bound with the
// ticket still pending, and the client's Wait ends with its context.
func TestWaitIsBounded(t *testing.T) {
	r := newRig(t, &gateway.AgentOptions{MaxWait: 50 * time.Millisecond})
	ctx := context.Background()
	tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)

	req, err := http.NewRequest(http.MethodGet, r.api.URL+"/v1/tickets/"+string(tk.ID)+"/wait?timeout=1h", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var got struct{ ID, Status string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "pending", got.Status, "an hour was cut to the bound")

	wctx, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
	defer cancel()
	last, err := r.client.Wait(wctx, tk.ID)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, stepup.StatusPending, last.Status)

	// A decision wakes a waiting client.
	done := make(chan stepup.Ticket, 1)
	go func() {
		t, _ := r.client.Wait(ctx, tk.ID)
		done <- t
	}()
	r.approveOverHTTP(t, tk.ID)
	select {
	case got := <-done:
		assert.Equal(t, stepup.StatusApproved, got.Status)
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after the approval")
	}
}

func TestNewAgentAPIConfig(t *testing.T) {
	r := newRig(t, nil)
	tests := []struct {
		name   string
		tokens []gateway.RuntimeToken
	}{
		{"no tokens", nil},
		{"short token", []gateway.RuntimeToken{{Token: "short", Agent: "agent:a"}}},
		{"not an agent", []gateway.RuntimeToken{{Token: agentToken, Agent: "user:dana", Users: []string{"user:dana"}}}},
		{"no users", []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:a"}}},
		{"an agent as user", []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:a", Users: []string{"agent:b"}}}},
		{"same token twice", []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:a", Users: []string{"user:dana"}}, {Token: agentToken, Agent: "agent:b", Users: []string{"user:dana"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.NewAgentAPI(r.Gate, tt.tokens, nil)
			assert.ErrorIs(t, err, stepup.ErrConfig)
		})
	}
	_, err := remote.NewClient("ftp://example.com", agentToken, nil)
	assert.ErrorIs(t, err, stepup.ErrConfig)
}

// TestCancelOverHTTP: a runtime withdraws its own pending ticket through
// the client; another agent's token cannot, and a decided ticket stays
// as decided.
func TestCancelOverHTTP(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, nil)
	tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)

	other, err := remote.NewClient(r.api.URL, otherToken, nil)
	require.NoError(t, err)
	_, err = other.Cancel(ctx, tk.ID, "not mine")
	assert.ErrorIs(t, err, stepup.ErrNotFound, "another agent's ticket does not exist for it")

	got, err := r.client.Cancel(ctx, tk.ID, "the host gave up")
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, got.Status)
	assert.Equal(t, "the host gave up", got.Reason)
	_, err = r.Approve(tk.ID)
	assert.ErrorIs(t, err, stepup.ErrResolved, "an approval after the cancel runs nothing")
	_, err = r.client.Cancel(ctx, tk.ID, "")
	assert.ErrorIs(t, err, stepup.ErrResolved)
}
