package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

// lockedBuffer is a buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestToolRunsEachApprovalOnce: the tool runs a signed effect once per
// idempotency key, answers a repeat with the first answer, and refuses
// what the gateway did not sign for it.
func TestToolRunsEachApprovalOnce(t *testing.T) {
	secret := bytes.Repeat([]byte("k"), 32)
	var log lockedBuffer
	srv := httptest.NewServer(newTools(secret, &log, time.Now))
	defer srv.Close()
	eff := canon.Effect{Tool: "issue_refund", Args: json.RawMessage(`{"amount":19.99,"order":"A-17"}`),
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}, PolicyVersion: "v1"}
	exec, err := httpexec.New("issue_refund", srv.URL+"/issue_refund", secret, nil)
	require.NoError(t, err)
	ctx := plug.WithTicket(context.Background(), "t_1")
	first, err := exec.Execute(ctx, eff, "key-1")
	require.NoError(t, err)
	again, err := exec.Execute(ctx, eff, "key-1")
	require.NoError(t, err)
	assert.Equal(t, first, again, "a repeat gets the first answer")
	assert.Equal(t, 1, strings.Count(log.String(), "ran issue_refund"), "and is not run again")
	assert.Contains(t, log.String(), `ran issue_refund {"amount":19.99,"order":"A-17"} for user:dana (ticket t_1, key key-1,`)
	_, err = exec.Execute(ctx, eff, "key-2")
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(log.String(), "ran issue_refund"), "another approval runs")

	wrong, err := httpexec.New("issue_refund", srv.URL+"/issue_refund", bytes.Repeat([]byte("x"), 32), &httpexec.Options{Retries: -1})
	require.NoError(t, err)
	_, err = wrong.Execute(ctx, eff, "key-3")
	require.ErrorIs(t, err, httpexec.ErrToolFailed, "another secret is refused")
	other, err := httpexec.New("issue_refund", srv.URL+"/send_email", secret, &httpexec.Options{Retries: -1})
	require.NoError(t, err)
	_, err = other.Execute(ctx, eff, "key-4")
	require.ErrorIs(t, err, httpexec.ErrToolFailed, "a request signed for another tool is refused")
	assert.Contains(t, log.String(), "refused a request for send_email: "+httpexec.ErrWrongTool.Error())
	resp, err := http.Post(srv.URL+"/issue_refund", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, 2, strings.Count(log.String(), "ran issue_refund"))
}

func TestRunRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	short := dir + "/short"
	require.NoError(t, writeFile(short, "abc\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: service -secret-file FILE"},
		{[]string{"-secret-file", dir + "/none"}, "no such file"},
		{[]string{"-secret-file", short}, "line 1: the secret is 3 bytes"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
