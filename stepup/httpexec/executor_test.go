package httpexec_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

const key = "k-approval-1"

func TestExecuteSendsTheStoredEffectOnceSigned(t *testing.T) {
	tl := newTool(t, ok)
	e, err := httpexec.New("issue_refund", tl.URL, secret, &httpexec.Options{Now: clock})
	require.NoError(t, err)
	eff := refund("19.99")
	out, err := e.Execute(plug.WithTicket(t.Context(), "t_abc"), eff, key)
	require.NoError(t, err)
	assert.JSONEq(t, `{"refunded":true}`, string(out))

	got := tl.requests()
	require.Len(t, got, 1, "exactly one request for one execution")
	sealed, err := canon.Seal(eff)
	require.NoError(t, err)
	r := got[0]
	req, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.NoError(t, err, "the signature verifies")
	assert.Equal(t, "issue_refund", req.Tool)
	assert.Equal(t, key, req.IdempotencyKey)
	assert.Equal(t, "t_abc", req.Ticket)
	assert.True(t, sealed.Digest().Equal(req.Digest), "the digest approved")
	again, err := canon.Seal(req.Effect)
	require.NoError(t, err)
	assert.Equal(t, sealed.Bytes(), again.Bytes(), "the effect received is the effect stored")
	assert.Contains(t, string(r.body), `"effect":`+string(sealed.Bytes()), "the canonical bytes travel as they are, unescaped")
	assert.Equal(t, key, r.header.Get(httpexec.HeaderIdempotencyKey))
}

func TestExecuteRetriesKeepTheKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []int // the tool's answers in turn; past the end, 200
		retries  int
		wantErr  error
		attempts int
	}{
		{"a 503 then success", []int{503}, 2, nil, 2},
		{"a 429 then success", []int{429}, 2, nil, 2},
		{"5xx until the retries run out", []int{500, 502, 503, 504}, 2, httpexec.ErrToolFailed, 3},
		{"a 400 is final", []int{400}, 2, httpexec.ErrToolFailed, 1},
		{"a 409 is final", []int{409}, 5, httpexec.ErrToolFailed, 1},
		{"no retries", []int{500}, -1, httpexec.ErrToolFailed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTool(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n < len(tc.statuses) {
					w.WriteHeader(tc.statuses[n])
					return
				}
				ok(n, w, r)
			})
			e, err := httpexec.New("issue_refund", tl.URL, secret, &httpexec.Options{Retries: tc.retries, Backoff: time.Millisecond})
			require.NoError(t, err)
			_, err = e.Execute(t.Context(), refund("5"), key)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			got := tl.requests()
			require.Len(t, got, tc.attempts)
			for _, r := range got {
				assert.Equal(t, key, r.header.Get(httpexec.HeaderIdempotencyKey), "every attempt carries the same key")
				assert.Equal(t, got[0].body, r.body, "every attempt carries the same body")
				_, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, time.Hour, time.Now())
				assert.NoError(t, err, "every attempt is signed")
			}
		})
	}
}

func TestExecuteHangingToolTimesOutAndRetriesWithTheSameKey(t *testing.T) {
	release := make(chan struct{})
	tl := newTool(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select { // hang until the executor gives up on the attempt
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	e, err := httpexec.New("issue_refund", tl.URL, secret, &httpexec.Options{Timeout: 20 * time.Millisecond, Retries: 2, Backoff: time.Millisecond})
	require.NoError(t, err)
	_, err = e.Execute(t.Context(), refund("5"), key)
	require.ErrorIs(t, err, httpexec.ErrUnreachable)
	got := tl.requests()
	require.Len(t, got, 3)
	for _, r := range got {
		assert.Equal(t, key, r.header.Get(httpexec.HeaderIdempotencyKey))
	}
}

func TestExecuteStopsRetryingWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	tl := newTool(t, func(n int, w http.ResponseWriter, r *http.Request) {
		cancel() // the gate's lease is lost during the first attempt
		w.WriteHeader(503)
	})
	e, err := httpexec.New("issue_refund", tl.URL, secret, &httpexec.Options{Retries: 5, Backoff: time.Hour})
	require.NoError(t, err)
	_, err = e.Execute(ctx, refund("5"), key)
	require.Error(t, err)
	assert.LessOrEqual(t, len(tl.requests()), 1, "no attempt after the context ended")
}

func TestExecuteBoundsTheResponse(t *testing.T) {
	for _, size := range []int{1024, 1025, 4096, 1 << 20} {
		tl := newTool(t, func(n int, w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(bytes.Repeat([]byte("x"), size))
		})
		e, err := httpexec.New("issue_refund", tl.URL, secret, &httpexec.Options{MaxResponseBytes: 1024, Retries: 3})
		require.NoError(t, err)
		out, err := e.Execute(t.Context(), refund("5"), key)
		if size <= 1024 {
			require.NoError(t, err)
			assert.Len(t, out, size)
			continue
		}
		require.ErrorIs(t, err, httpexec.ErrResponseTooLarge, "size %d", size)
		assert.Nil(t, out)
		assert.Len(t, tl.requests(), 1, "a 2xx, however long, is not retried: the effect may have happened")
	}
}

func TestExecuteFollowsNoRedirect(t *testing.T) {
	elsewhere := newTool(t, ok)
	tl := newTool(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL, http.StatusTemporaryRedirect)
	})
	e, err := httpexec.New("issue_refund", tl.URL, secret, nil)
	require.NoError(t, err)
	_, err = e.Execute(t.Context(), refund("5"), key)
	require.ErrorIs(t, err, httpexec.ErrToolFailed)
	assert.Empty(t, elsewhere.requests(), "the signed effect never reaches another URL")
}

func TestExecuteRefuses(t *testing.T) {
	tl := newTool(t, ok)
	e, err := httpexec.New("issue_refund", tl.URL, secret, nil)
	require.NoError(t, err)
	other := refund("5")
	other.Tool = "send_email"
	_, err = e.Execute(t.Context(), other, key)
	require.ErrorIs(t, err, httpexec.ErrMalformed, "an effect of another tool")
	_, err = e.Execute(t.Context(), refund("5"), "a key\nwith a line break")
	require.ErrorIs(t, err, httpexec.ErrMalformed)
	_, err = e.Execute(t.Context(), refund("1e400"), key)
	require.Error(t, err, "an effect canon cannot hash faithfully")
	assert.Empty(t, tl.requests())
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, tool, url string
		secret          []byte
		opts            *httpexec.Options
		want            string
	}{
		{"short secret", "t", "http://x", secret[:31], nil, "32 bytes"},
		{"no scheme", "t", "x.example", secret, nil, "http or https"},
		{"ftp", "t", "ftp://x.example", secret, nil, "http or https"},
		{"credentials", "t", "https://u:p@x.example", secret, nil, "credentials"},
		{"empty tool", "", "http://x", secret, nil, "tool name"},
		{"tool with a line break", "a\nb", "http://x", secret, nil, "tool name"},
		{"negative timeout", "t", "http://x", secret, &httpexec.Options{Timeout: -1}, "negative"},
		{"too many retries", "t", "http://x", secret, &httpexec.Options{Retries: httpexec.MaxRetries + 1}, "retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpexec.New(tc.tool, tc.url, tc.secret, tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.False(t, strings.Contains(err.Error(), "u:p"), "no credentials in errors")
		})
	}
	_, err := httpexec.New("t", "http://x", secret[:1], nil)
	require.ErrorIs(t, err, httpexec.ErrSecret)
}

// statusTransport answers every request with one status and counts them.
type statusTransport struct {
	status   int
	attempts int
}

func (tr *statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.attempts++
	return &http.Response{StatusCode: tr.status, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// TestExecuteRetriesOnly5xxAnd429: every final status an answer can carry,
// 200 to 999, against the package documentation: a 2xx succeeds at once,
// a 5xx or a 429 is tried 1 + Retries times, any other status (600 and
// past included) is final after one attempt.
func TestExecuteRetriesOnly5xxAnd429(t *testing.T) {
	const retries = 2
	for status := 200; status <= 999; status++ {
		tr := &statusTransport{status: status}
		e, err := httpexec.New("issue_refund", "http://tools.invalid/x", secret,
			&httpexec.Options{Retries: retries, Backoff: time.Nanosecond, Client: &http.Client{Transport: tr}})
		require.NoError(t, err)
		_, err = e.Execute(t.Context(), refund("5"), key)
		switch {
		case status/100 == 2:
			require.NoError(t, err, "status %d", status)
			assert.Equal(t, 1, tr.attempts, "status %d", status)
		case status/100 == 5 || status == http.StatusTooManyRequests:
			require.ErrorIs(t, err, httpexec.ErrToolFailed, "status %d", status)
			assert.Equal(t, 1+retries, tr.attempts, "status %d is retried", status)
		default:
			require.ErrorIs(t, err, httpexec.ErrToolFailed, "status %d", status)
			assert.Contains(t, err.Error(), "(final)", "status %d", status)
			assert.Equal(t, 1, tr.attempts, "status %d is final", status)
		}
	}
}
