package inbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
)

// TestStreamLive: two approvers watch their queues; a ticket for both
// arrives in both, one approves it on the approval site, and it leaves
// both.
func TestStreamLive(t *testing.T) {
	r := newRig(t, nil)
	se, _ := r.open(t, r.signIn(t, r.erin))
	sf, _ := r.open(t, r.signIn(t, r.finn))
	assert.Empty(t, se.queue(t).Entries, "the whole queue at once, empty")
	assert.Empty(t, sf.queue(t).Entries)

	id := string(r.propose(t, "finance@example.com"))
	has := func(q queueOf) bool { return slices.Contains(q.ids(), id) }
	qe := se.until(t, has)
	qf := sf.until(t, has)
	assert.Equal(t, []string{finn}, qe.Entries[0].Others)
	assert.Equal(t, []string{erin}, qf.Entries[0].Others)

	resp, b := r.approveOnSite(t, r.erin, id, qe.Entries[0].Approve)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	gone := func(q queueOf) bool { return !has(q) }
	se.until(t, gone)
	sf.until(t, gone)
	got, err := r.Gate.Ticket(context.Background(), stepup.TicketID(id))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusApproved, got.Status)
}

// TestStreamPushesOnlyChanges: a quiet queue sends heartbeats, not the
// same queue again.
func TestStreamPushesOnlyChanges(t *testing.T) {
	r := newRig(t, &inbox.Options{Poll: 5 * time.Millisecond, Heartbeat: 20 * time.Millisecond})
	s, resp := r.open(t, r.signIn(t, r.erin))
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, inbox.CSP, resp.Header.Get("Content-Security-Policy"))
	s.queue(t)
	for range 3 {
		ev, ok := s.next(t, "comment")
		require.True(t, ok)
		assert.Equal(t, ": keep-alive", ev.data)
	}
	select {
	case ev := <-s.events:
		assert.NotEqual(t, "queue", ev.name, "an unchanged queue is not sent again")
	default:
	}
}

func TestStreamsAreBounded(t *testing.T) {
	r := newRig(t, &inbox.Options{StreamsPerApprover: 2, Streams: 3, Poll: 10 * time.Millisecond})
	erinCookie := r.signIn(t, r.erin)
	finnCookie := r.signIn(t, r.finn)
	first, _ := r.open(t, erinCookie)
	first.queue(t)
	second, _ := r.open(t, r.signIn(t, r.erin)) // another device: the bound is the approver's
	second.queue(t)
	_, resp := r.open(t, erinCookie)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "erin's third stream")
	third, resp := r.open(t, finnCookie)
	require.Equal(t, http.StatusOK, resp.StatusCode, "finn's first")
	third.queue(t)
	_, resp = r.open(t, finnCookie)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the inbox's bound")
	assert.Equal(t, 3, r.inbox.Streams())

	first.close()
	require.Eventually(t, func() bool { return r.inbox.Streams() == 2 }, 10*time.Second, 5*time.Millisecond,
		"a stream whose client left releases its slot")
	again, resp := r.open(t, erinCookie)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	again.queue(t)

	second.close()
	third.close()
	again.close()
	require.Eventually(t, func() bool { return r.inbox.Streams() == 0 }, 10*time.Second, 5*time.Millisecond,
		"every stream's handler returned")
}

func TestStreamEndsWithTheSession(t *testing.T) {
	t.Run("expiry", func(t *testing.T) {
		r := newRig(t, nil)
		s, _ := r.open(t, r.signIn(t, r.erin))
		s.queue(t)
		r.Clock.Advance(inbox.DefaultSessionTTL)
		assert.True(t, s.ended(t))
	})
	t.Run("sign-out", func(t *testing.T) {
		r := newRig(t, nil)
		cookie := r.signIn(t, r.erin)
		s, _ := r.open(t, cookie)
		s.queue(t)
		resp, _ := r.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, s.ended(t))
	})
	t.Run("drain", func(t *testing.T) {
		r := newRig(t, nil)
		cookie := r.signIn(t, r.erin)
		s, _ := r.open(t, cookie)
		s.queue(t)
		r.inbox.Drain()
		assert.False(t, s.ended(t), "a drained stream just closes: the browser reconnects")
		_, resp := r.open(t, cookie)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.Eventually(t, func() bool { return r.inbox.Streams() == 0 }, 10*time.Second, 5*time.Millisecond)
	})
}

// TestStreamOutlivesServerTimeouts: a stream served by a server with
// short read and write timeouts (as gateway.NewServer sets them) keeps
// going past them, and still brings news.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	r := newRig(t, &inbox.Options{Poll: 10 * time.Millisecond, Heartbeat: 50 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: r.srv.Config.Handler, ReadTimeout: 200 * time.Millisecond,
		WriteTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { r.inbox.Drain(); _ = srv.Close() })
	r.srv.URL = "http://" + ln.Addr().String()

	s, _ := r.open(t, r.signIn(t, r.erin))
	s.queue(t)
	time.Sleep(time.Second) // several times both timeouts
	id := string(r.propose(t, "finance@example.com"))
	q := s.until(t, func(q queueOf) bool { return len(q.Entries) > 0 })
	assert.Equal(t, []string{id}, q.ids())
}

// flakyRecheck is a sign-in whose credential checks fail as a store
// failure while fail is set.
type flakyRecheck struct {
	inbox.SignIn
	fail atomic.Bool
}

func (f *flakyRecheck) Recheck(ctx context.Context, who passkey.SignedIn) error {
	if f.fail.Load() {
		return fmt.Errorf("%w: the database is down", stepup.ErrStore)
	}
	return f.SignIn.Recheck(ctx, who)
}

// TestStoreFailureKeepsTheSession: while the credential cannot be
// checked, the session lists nothing (a 500, a silent stream), and it is
// not signed out: it lists again once the store answers.
func TestStoreFailureKeepsTheSession(t *testing.T) {
	flaky := &flakyRecheck{}
	r := newRigWith(t, nil, func(s inbox.SignIn) inbox.SignIn { flaky.SignIn = s; return flaky })
	cookie := r.signIn(t, r.erin)
	s, _ := r.open(t, cookie)
	s.queue(t)

	flaky.fail.Store(true)
	resp, b := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(b))
	assert.Empty(t, resp.Cookies(), "the cookie is kept")
	assert.NotContains(t, string(b), "database", "a store's error stays on the server")
	id := string(r.propose(t, "finance@example.com"))
	time.Sleep(50 * time.Millisecond) // several polls
	select {
	case ev := <-s.events:
		assert.NotEqual(t, "queue", ev.name, "nothing is sent while the session is not known to stand")
		assert.NotEqual(t, "end", ev.name)
	default:
	}

	flaky.fail.Store(false)
	q := s.until(t, func(q queueOf) bool { return len(q.Entries) == 1 })
	assert.Equal(t, []string{id}, q.ids())
	resp, _ = r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
