package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// replicaKey is the session key the replicas of these tests share, as
// Options.Key says replicas behind one load balancer must.
var replicaKey = []byte("the inbox key every replica shares, 32+ bytes")

// replica returns another inbox over r's store, with a gate of its own
// and the same key, served on a server of its own: another replica
// behind the load balancer, or r's after a restart.
func (r *rig) replica(t testing.TB, wrap func(inbox.Desk) inbox.Desk, log *slog.Logger) *rig {
	t.Helper()
	g, err := gate.New(r.Store, financeCatalog(t), stepuptest.Passkeys(r.Store), gate.WithApproverGroup("finance", erin, finn),
		gate.WithLocalClock(r.Clock.Now))
	require.NoError(t, err)
	signIn, err := passkey.NewSignIn(stepuptest.Passkeys(r.Store), passkey.SignInClock(r.Clock.Now))
	require.NoError(t, err)
	var desk inbox.Desk = g.Desk()
	if wrap != nil {
		desk = wrap(desk)
	}
	in, err := inbox.New(desk, signIn, r.rp, &inbox.Options{Key: replicaKey, Clock: r.Clock.Now, Poll: 10 * time.Millisecond,
		Logger: log})
	require.NoError(t, err)
	other := *r
	other.inbox = in
	other.srv = httptest.NewServer(inbox.Secure(other.mux()))
	t.Cleanup(func() {
		in.Drain()
		other.srv.Close()
	})
	return &other
}

// reads are the requests a session opens, each answering 200 while it
// stands.
var reads = map[string]func(t *testing.T, r *rig, cookie string) int{
	"queue": func(t *testing.T, r *rig, cookie string) int {
		resp, _ := r.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
		return resp.StatusCode
	},
	"session": func(t *testing.T, r *rig, cookie string) int {
		resp, _ := r.do(t, req{method: "GET", path: "/inbox/session", cookie: cookie})
		return resp.StatusCode
	},
	"events": func(t *testing.T, r *rig, cookie string) int {
		s, resp := r.open(t, cookie)
		if s != nil {
			s.close()
		}
		return resp.StatusCode
	},
	"signed in": func(t *testing.T, r *rig, cookie string) int {
		hr := httptest.NewRequest(http.MethodGet, r.rp.Origin+"/", nil)
		hr.Header.Set("Cookie", cookie)
		if _, ok := r.inbox.SignedIn(hr); ok {
			return http.StatusOK
		}
		return http.StatusUnauthorized
	},
}

// TestSignOutEndsTheSessionOnEveryReplica: with the key shared, a session
// opened on one replica works on the others; signed out on any of them,
// its cookie opens nothing on any replica, nor on one restarted, through
// every request a session makes, while the approver's other session
// stands everywhere.
func TestSignOutEndsTheSessionOnEveryReplica(t *testing.T) {
	for _, where := range []string{"the replica it signed in on", "another replica"} {
		for name, read := range reads {
			t.Run(where+"/"+name, func(t *testing.T) {
				a := newRig(t, &inbox.Options{Key: replicaKey, Poll: 10 * time.Millisecond})
				b := a.replica(t, nil, nil)
				cookie := a.signIn(t, a.erin)
				other := b.signIn(t, a.erin)
				for _, r := range []*rig{a, b} {
					require.Equal(t, http.StatusOK, read(t, r, cookie), "the session works on every replica")
				}
				out := a
				if where == "another replica" {
					out = b
				}
				resp, body := out.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
				require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

				restarted := a.replica(t, nil, nil)
				for i, r := range []*rig{a, b, restarted} {
					assert.Equal(t, http.StatusUnauthorized, read(t, r, cookie), "replica %d: a signed-out session", i)
					assert.Equal(t, http.StatusOK, read(t, r, other), "replica %d: the approver's other session", i)
				}
			})
		}
	}
}

// TestStreamEndsOnSignOutElsewhere: a stream open on one replica ends,
// with its "end" event, when the session signs out on another.
func TestStreamEndsOnSignOutElsewhere(t *testing.T) {
	a := newRig(t, &inbox.Options{Key: replicaKey, Poll: 10 * time.Millisecond})
	b := a.replica(t, nil, nil)
	cookie := a.signIn(t, a.erin)
	s, resp := b.open(t, cookie)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.queue(t)
	resp, _ = a.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, s.ended(t), "the stream on the other replica outlived the sign-out")
}

// namedSignIn signs in whoever the state names, with a credential of
// their own, whose checks always pass: sign-ins by the thousand, without
// passkeys.
type namedSignIn struct{}

func (namedSignIn) Begin(context.Context) (json.RawMessage, string, error) {
	return json.RawMessage(`{}`), "state", nil
}

func (namedSignIn) Finish(_ context.Context, state string, _ []byte) (passkey.SignedIn, error) {
	return passkey.SignedIn{User: state, CredentialID: []byte("cred-" + state)}, nil
}

func (namedSignIn) Recheck(context.Context, passkey.SignedIn) error { return nil }

// TestSignOutOutlastsAnyNumberOfSignOuts: one approver's sign-out stands
// however many sign-outs follow it (another approver's script signing in
// and out, more than this process remembers), whether their sessions
// expire after or before the first one's, on this replica and a fresh one.
func TestSignOutOutlastsAnyNumberOfSignOuts(t *testing.T) {
	for _, later := range []bool{true, false} {
		t.Run(fmt.Sprintf("the others expire later: %v", later), func(t *testing.T) {
			h := stepuptest.NewGate(t, nil)
			rp := stepuptest.RP()
			now := h.Clock.Now()
			clock := func() time.Time { return now }
			newInbox := func() *inbox.Inbox {
				in, err := inbox.New(h.Gate.Desk(), namedSignIn{}, rp, &inbox.Options{Key: replicaKey, Clock: clock})
				require.NoError(t, err)
				return in
			}
			in := newInbox()
			call := func(in *inbox.Inbox, method, path, body, cookie string) *httptest.ResponseRecorder {
				hr := httptest.NewRequest(method, rp.Origin+path, strings.NewReader(body))
				if method == http.MethodPost {
					hr.Header.Set("Origin", rp.Origin)
					hr.Header.Set("Content-Type", "application/json")
				}
				if cookie != "" {
					hr.Header.Set("Cookie", cookie)
				}
				return serve(in, hr)
			}
			signIn := func(user string) string {
				w := call(in, http.MethodPost, "/inbox/signin", `{"state":"`+user+`","credential":{}}`, "")
				require.Equal(t, http.StatusOK, w.Code, w.Body.String())
				c := w.Result().Cookies()[0]
				return c.Name + "=" + c.Value
			}
			victim := signIn("user:erin")
			require.Equal(t, http.StatusOK, call(in, http.MethodPost, "/inbox/signout", "", victim).Code)
			if later {
				now = now.Add(time.Minute)
			} else {
				now = now.Add(-time.Minute)
			}
			for range 10001 {
				c := signIn("user:mallory")
				require.Equal(t, http.StatusOK, call(in, http.MethodPost, "/inbox/signout", "", c).Code)
			}
			if !later {
				now = now.Add(time.Minute)
			}
			for i, in := range []*inbox.Inbox{in, newInbox()} {
				w := call(in, http.MethodGet, "/inbox/queue", "", victim)
				assert.Equal(t, http.StatusUnauthorized, w.Code, "inbox %d: a signed-out session came back: %.100s", i, w.Body.String())
			}
		})
	}
}

// flakyDesk is a desk whose record of sign-outs fails as a store does
// while told to.
type flakyDesk struct {
	inbox.Desk
	failEnd, failRead atomic.Bool
}

func (f *flakyDesk) EndSession(ctx context.Context, id []byte, until time.Time) error {
	if f.failEnd.Load() {
		return fmt.Errorf("%w: the database is down", stepup.ErrStore)
	}
	return f.Desk.EndSession(ctx, id, until)
}

func (f *flakyDesk) SessionEnded(ctx context.Context, id []byte, until time.Time) (bool, error) {
	if f.failRead.Load() {
		return false, fmt.Errorf("%w: the database is down", stepup.ErrStore)
	}
	return f.Desk.SessionEnded(ctx, id, until)
}

// logBuffer is a log the tests read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestSignOutThatCannotBeRecordedFailsClosed: when the store does not
// take a sign-out, the approver is told it may still open elsewhere (a
// 503 with words saying so, not "signed out"), the failure is logged, the
// session is refused on this replica at once, and the cookie is kept so
// signing out can be tried again. Once the store takes writes again, the
// cookie's next request here records the sign-out, and the other
// replicas refuse it too.
func TestSignOutThatCannotBeRecordedFailsClosed(t *testing.T) {
	for _, again := range []string{"signs out again", "reloads the page"} {
		t.Run(again, func(t *testing.T) {
			b := newRig(t, &inbox.Options{Key: replicaKey, Poll: 10 * time.Millisecond})
			flaky := &flakyDesk{}
			log := &logBuffer{}
			a := b.replica(t, func(d inbox.Desk) inbox.Desk { flaky.Desk = d; return flaky }, slog.New(slog.NewTextHandler(log, nil)))
			cookie := a.signIn(t, a.erin)

			flaky.failEnd.Store(true)
			resp, body := a.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			assert.Contains(t, string(body), "could not be saved")
			assert.NotContains(t, string(body), "signed out\"", "not told it signed out")
			assert.NotContains(t, string(body), "database", "a store's error stays on the server")
			assert.Empty(t, resp.Cookies(), "the cookie is kept, to sign out again")
			assert.Contains(t, log.String(), "inbox sign-out not recorded")
			assert.Contains(t, log.String(), "the database is down")
			for name, read := range reads {
				assert.Equal(t, http.StatusUnauthorized, read(t, a, cookie), "%s: refused where it signed out", name)
			}
			assert.Equal(t, http.StatusOK, reads["queue"](t, b, cookie), "not known to the other replica yet")

			flaky.failEnd.Store(false)
			if again == "signs out again" {
				resp, _ = a.do(t, req{method: "POST", path: "/inbox/signout", cookie: cookie})
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			} else {
				resp, _ = a.do(t, req{method: "GET", path: "/inbox/session", cookie: cookie})
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			}
			for name, read := range reads {
				assert.Equal(t, http.StatusUnauthorized, read(t, b, cookie), "%s: the other replica, once recorded", name)
			}
		})
	}
}

// TestSessionRefusedWhileSignOutsUnreadable: while the store cannot say
// whether a session was signed out, every request of it is refused (not
// as signed out: the cookie stays), and its open stream sends nothing;
// once the store answers, it lists again.
func TestSessionRefusedWhileSignOutsUnreadable(t *testing.T) {
	b := newRig(t, &inbox.Options{Key: replicaKey, Poll: 10 * time.Millisecond})
	flaky := &flakyDesk{}
	log := &logBuffer{}
	a := b.replica(t, func(d inbox.Desk) inbox.Desk { flaky.Desk = d; return flaky }, slog.New(slog.NewTextHandler(log, nil)))
	cookie := a.signIn(t, a.erin)
	s, _ := a.open(t, cookie)
	s.queue(t)

	flaky.failRead.Store(true)
	for _, path := range []string{"/inbox/queue", "/inbox/session", "/inbox/figures"} {
		resp, body := a.do(t, req{method: "GET", path: path, cookie: cookie})
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s: %s", path, body)
		assert.Empty(t, resp.Cookies(), "%s: the cookie is kept", path)
		assert.NotContains(t, string(body), "database", path)
	}
	_, resp := a.open(t, cookie)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, "a new stream")
	assert.Equal(t, http.StatusUnauthorized, reads["signed in"](t, a, cookie), "no approver is said to be signed in")
	assert.Contains(t, log.String(), "the sign-outs could not be read")
	id := string(a.propose(t, "finance@example.com"))
	time.Sleep(50 * time.Millisecond) // several polls
	select {
	case ev := <-s.events:
		assert.NotEqual(t, "queue", ev.name, "nothing is sent while the session is not known to stand")
		assert.NotEqual(t, "end", ev.name)
	default:
	}

	flaky.failRead.Store(false)
	q := s.until(t, func(q queueOf) bool { return len(q.Entries) == 1 })
	assert.Equal(t, []string{id}, q.ids())
	resp, _ = a.do(t, req{method: "GET", path: "/inbox/queue", cookie: cookie})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
