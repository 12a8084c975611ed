package notify_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/notify"
)

// fast makes retries quick; tests never depend on how quick.
var fast = &notify.WebhookOptions{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

func newWebhook(t *testing.T, url string, o *notify.WebhookOptions) *notify.Webhook {
	t.Helper()
	h, err := notify.NewWebhook(url, secret, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
	})
	return h
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

// TestWebhookRoundTrip: what the Webhook sends, Verify accepts, with the
// same Notice; a ReplayGuard refuses the same request sent again.
func TestWebhookRoundTrip(t *testing.T) {
	guard := notify.NewReplayGuard(16)
	var (
		mu    sync.Mutex
		got   []notify.Delivery
		reqs  []*http.Request
		fails []error
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := guard.Verify(r, secret, window, time.Now())
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fails = append(fails, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got = append(got, d)
		reqs = append(reqs, r)
	}))
	defer srv.Close()
	h := newWebhook(t, srv.URL, nil)

	n := sampleNotice()
	require.NoError(t, h.Notify(context.Background(), n))
	eventually(t, func() bool { return h.Stats().Delivered == 1 }, "delivered")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	assert.Empty(t, fails)
	assert.Equal(t, n, got[0].Notice)
	assert.Len(t, got[0].ID, 32)
	assert.Equal(t, got[0].ID, reqs[0].Header.Get(notify.HeaderDelivery))
	assert.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
	assert.Equal(t, notify.Stats{Queued: 1, Delivered: 1}, h.Stats())
}

func TestWebhookReplayRefused(t *testing.T) {
	guard := notify.NewReplayGuard(16)
	var bodies [][]byte
	var sigs []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Capture the request as an eavesdropper would, then verify it.
		body := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		mu.Lock()
		bodies, sigs = append(bodies, body), append(sigs, r.Header.Get(notify.HeaderSignature))
		mu.Unlock()
	}))
	defer srv.Close()
	h := newWebhook(t, srv.URL, nil)
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))
	eventually(t, func() bool { return h.Stats().Delivered == 1 }, "delivered")

	mu.Lock()
	defer mu.Unlock()
	at := time.Now()
	_, err := guard.Verify(request(bodies[0], sigs[0]), secret, window, at)
	require.NoError(t, err)
	_, err = guard.Verify(request(bodies[0], sigs[0]), secret, window, at)
	assert.ErrorIs(t, err, notify.ErrReplayed)
}

func TestWebhookRetriesBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		attempt int32 // requests the server sees
	}{
		{"500 is retried", http.StatusInternalServerError, 3},
		{"503 is retried", http.StatusServiceUnavailable, 3},
		{"429 is retried", http.StatusTooManyRequests, 3},
		{"400 is final", http.StatusBadRequest, 1},
		{"401 is final", http.StatusUnauthorized, 1},
		{"a redirect is final", http.StatusFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if tc.status == http.StatusFound {
					http.Redirect(w, r, "/elsewhere", tc.status)
					return
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			o := *fast
			o.Attempts = 3
			h := newWebhook(t, srv.URL, &o)
			require.NoError(t, h.Notify(context.Background(), sampleNotice()))
			eventually(t, func() bool { return h.Stats().Failed == 1 }, "given up")
			require.NoError(t, h.Close(context.Background()))
			assert.Equal(t, tc.attempt, hits.Load())
			assert.Equal(t, uint64(tc.attempt-1), h.Stats().Retries)
			assert.Zero(t, h.Stats().Delivered)
		})
	}
}

// TestWebhookRecovers: a failing endpoint that recovers gets the Notice.
func TestWebhookRecovers(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, err := notify.Verify(r, secret, window, time.Now())
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	h := newWebhook(t, srv.URL, fast)
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))
	eventually(t, func() bool { return h.Stats().Delivered == 1 }, "delivered on the third try")
	assert.Equal(t, int32(3), hits.Load())
	assert.Equal(t, uint64(2), h.Stats().Retries)
}

type failingTransport struct{ calls atomic.Int32 }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return nil, errors.New("connection refused")
}

func TestWebhookNetworkErrorsRetried(t *testing.T) {
	tr := &failingTransport{}
	o := *fast
	o.Attempts = 4
	o.Client = &http.Client{Transport: tr}
	h := newWebhook(t, "https://hooks.example.com/asu", &o)
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))
	eventually(t, func() bool { return h.Stats().Failed == 1 }, "given up")
	assert.Equal(t, int32(4), tr.calls.Load())
}

// TestWebhookPerAttemptTimeout: a try that hangs is cut off and retried.
func TestWebhookPerAttemptTimeout(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := *fast
	o.Attempts = 2
	o.AttemptTimeout = 20 * time.Millisecond
	h := newWebhook(t, srv.URL, &o)
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))
	eventually(t, func() bool { return h.Stats().Failed == 1 }, "both tries timed out")
	assert.Equal(t, int32(2), hits.Load())
}

// TestWebhookFullQueueDrops: with the one worker stuck and the queue full,
// Notify returns ErrQueueFull at once, every time, and counts the drops.
func TestWebhookFullQueueDrops(t *testing.T) {
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	defer srv.Close()
	o := *fast
	o.Workers, o.Queue = 1, 2
	h := newWebhook(t, srv.URL, &o)
	ctx := context.Background()

	require.NoError(t, h.Notify(ctx, sampleNotice()))
	<-entered // the worker holds the first
	require.NoError(t, h.Notify(ctx, sampleNotice()))
	require.NoError(t, h.Notify(ctx, sampleNotice()))
	for range 100 {
		assert.ErrorIs(t, h.Notify(ctx, sampleNotice()), notify.ErrQueueFull)
	}
	assert.Equal(t, notify.Stats{Queued: 3, Dropped: 100}, h.Stats())

	close(release)
	eventually(t, func() bool { return h.Stats().Delivered == 3 }, "the queued ones are delivered")
}

func TestWebhookRefusesInvalidNotice(t *testing.T) {
	h := newWebhook(t, "https://hooks.example.com/asu", nil)
	for _, mutate := range []func(*notify.Notice){
		func(n *notify.Notice) { n.Ticket = "" },
		func(n *notify.Notice) { n.Link = "" },
		func(n *notify.Notice) { n.Link = "/t/relative" },
		func(n *notify.Notice) { n.Link = "https://user:pw@approve.example.com/t/1" },
		func(n *notify.Notice) { n.Link = "ftp://approve.example.com/t/1" },
		func(n *notify.Notice) { n.User = "\xff" },
		func(n *notify.Notice) { n.Approvers = make([]string, notify.MaxApprovers+1) },
		func(n *notify.Notice) { n.Tool = string(make([]byte, notify.MaxFieldBytes+1)) },
	} {
		n := sampleNotice()
		mutate(&n)
		assert.ErrorIs(t, h.Notify(context.Background(), n), notify.ErrInvalidNotice)
	}
	assert.Zero(t, h.Stats().Queued)
}

func TestNewWebhookRefuses(t *testing.T) {
	_, err := notify.NewWebhook("https://hooks.example.com/asu", secret[:31], nil)
	assert.ErrorIs(t, err, notify.ErrSecret)
	for _, u := range []string{"", "hooks.example.com/asu", "file:///etc/passwd", "https://"} {
		_, err := notify.NewWebhook(u, secret, nil)
		assert.Error(t, err, u)
	}
}

func TestWebhookClosed(t *testing.T) {
	h, err := notify.NewWebhook("https://hooks.example.com/asu", secret, nil)
	require.NoError(t, err)
	require.NoError(t, h.Close(context.Background()))
	require.NoError(t, h.Close(context.Background()), "Close twice")
	assert.ErrorIs(t, h.Notify(context.Background(), sampleNotice()), notify.ErrClosed)
}

// TestWebhookCloseGivesUp: Close with a deadline interrupts a stuck try,
// abandons what is queued, and returns the context's error.
func TestWebhookCloseGivesUp(t *testing.T) {
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := *fast
	o.Workers = 1
	o.AttemptTimeout = time.Hour
	h, err := notify.NewWebhook(srv.URL, secret, &o)
	require.NoError(t, err)
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))
	<-entered
	require.NoError(t, h.Notify(context.Background(), sampleNotice()))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, h.Close(ctx), context.DeadlineExceeded)
	assert.Equal(t, notify.Stats{Queued: 2, Failed: 2}, h.Stats())
}

// TestWebhookCloseNoLeak: after Close (and the test server's own Close),
// the goroutine count comes back to what it was.
func TestWebhookCloseNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		o := *fast
		o.Workers = 4
		h, err := notify.NewWebhook(srv.URL, secret, &o)
		require.NoError(t, err)
		for range 20 {
			require.NoError(t, h.Notify(context.Background(), sampleNotice()))
		}
		require.NoError(t, h.Close(context.Background()))
		assert.Equal(t, uint64(20), h.Stats().Delivered, "Close waits for the queued ones")
	}()
	// Goroutines of closed connections end shortly after; wait for them
	// here, not in require.Eventually, which runs its own goroutines.
	after := runtime.NumGoroutine()
	for i := 0; i < 1000 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	assert.LessOrEqual(t, after, before, "goroutines leaked")
}
