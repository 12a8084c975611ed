package httpexec_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// secret is the tests' shared secret.
var secret = bytes.Repeat([]byte("s"), 32)

// refund is an effect with arguments that JSON writers like to escape.
func refund(amount string) canon.Effect {
	return canon.Effect{Tool: "issue_refund",
		Args:          json.RawMessage(`{"amount":` + amount + `,"note":"<b>&amp; \u00e9 ✓</b>","order":"A-17"}`),
		Refs:          []canon.Ref{},
		Task:          "t-1",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:billing", Delegations: []string{}},
		PolicyVersion: "v1", Audience: "refunds"}
}

// received is one request a tool got: its headers and body.
type received struct {
	header http.Header
	body   []byte
}

// tool is an httptest tool server that records every request and answers
// with answer(n) for the n-th (from 0).
type tool struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

func newTool(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *tool {
	t.Helper()
	tl := &tool{}
	tl.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		tl.mu.Lock()
		n := len(tl.got)
		tl.got = append(tl.got, received{header: r.Header.Clone(), body: body})
		tl.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(tl.Close)
	return tl
}

// requests returns what the tool received so far.
func (tl *tool) requests() []received {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]received(nil), tl.got...)
}

// ok answers 200 with a small JSON body.
func ok(_ int, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"refunded":true}`))
}

// fixedNow is a clock for signing and verifying.
var fixedNow = time.Unix(1_800_000_000, 0)

func clock() time.Time { return fixedNow }
