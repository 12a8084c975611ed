package inbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// Two approvers of the finance group, to which the rig's policy routes
// send_email; user:dana's agent proposes.
const (
	erin = "user:erin"
	finn = "user:finn"
)

// financeCatalog is the seed catalog with send_email routed to the
// finance group.
func financeCatalog(t testing.TB) *policy.Catalog {
	t.Helper()
	tools := stepuptest.SeedTools()
	for i := range tools {
		if tools[i].Name == "send_email" {
			tools[i].Approvers = "finance"
		}
	}
	c, err := policy.NewCatalog(stepuptest.SeedPolicyVersion, tools...)
	require.NoError(t, err)
	return c
}

// rig is a gate whose send_email goes to erin and finn, its approval site
// with the inbox mounted beside it on one test server, and their passkeys.
type rig struct {
	*stepuptest.Harness
	inbox      *inbox.Inbox
	site       http.Handler
	srv        *httptest.Server
	erin, finn *stepuptest.Authenticator
	rp         passkey.RelyingParty
}

func newRig(t testing.TB, opts *inbox.Options) *rig {
	t.Helper()
	return newRigWith(t, opts, nil)
}

// newRigWith is newRig with the sign-in wrapped by wrap (nil: as it is).
func newRigWith(t testing.TB, opts *inbox.Options, wrap func(inbox.SignIn) inbox.SignIn) *rig {
	t.Helper()
	return newRigOn(t, financeCatalog(t), opts, wrap)
}

// newRigOn is newRigWith deciding with cat.
func newRigOn(t testing.TB, cat *policy.Catalog, opts *inbox.Options, wrap func(inbox.SignIn) inbox.SignIn) *rig {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "q3.csv"), []byte(stepuptest.Q3), 0o600))
	h := stepuptest.NewGate(t, cat, gate.WithApproverGroup("finance", erin, finn),
		gate.WithResolver(canon.FileResolver{Root: dir}), gate.WithExecutor("send_email", &stepuptest.Recorder{}))
	r := &rig{Harness: h, rp: stepuptest.RP()}
	r.erin = h.Enroll(t, erin)
	r.finn = h.Enroll(t, finn)
	signIn, err := passkey.NewSignIn(stepuptest.Passkeys(h.Store), passkey.SignInClock(h.Clock.Now))
	require.NoError(t, err)
	var in inbox.SignIn = signIn
	if wrap != nil {
		in = wrap(signIn)
	}
	o := inbox.Options{Clock: h.Clock.Now, Poll: 10 * time.Millisecond}
	if opts != nil {
		o = *opts
		if o.Clock == nil {
			o.Clock = h.Clock.Now
		}
	}
	r.inbox, err = inbox.New(h.Gate.Desk(), in, r.rp, &o)
	require.NoError(t, err)
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, r.rp, nil)
	require.NoError(t, err)
	r.site = site
	r.srv = httptest.NewServer(inbox.Secure(r.mux()))
	t.Cleanup(func() {
		r.inbox.Drain()
		r.srv.Close()
	})
	return r
}

// mux mounts the rig's inbox beside its site, as the package doc shows,
// without the headers wrapper.
func (r *rig) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(r.inbox.Prefix()+"/", r.inbox)
	mux.Handle("/", r.site)
	return mux
}

// propose has dana's agent propose send_email to to: pending, for the
// finance group.
func (r *rig) propose(t testing.TB, to string) stepup.TicketID {
	t.Helper()
	tk, err := r.Gate.Propose(context.Background(), stepuptest.SendEmail(to))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk.ID
}

// req is one request to the rig's server, as the inbox page sends it
// unless the test says otherwise.
type req struct {
	method, path string
	body         string
	cookie       string
	header       map[string]string // overrides; "" removes
}

// do sends q and returns the response and its body.
func (r *rig) do(t testing.TB, q req) (*http.Response, []byte) {
	t.Helper()
	hr, err := http.NewRequest(q.method, r.srv.URL+q.path, strings.NewReader(q.body))
	require.NoError(t, err)
	if q.method == http.MethodPost {
		hr.Header.Set("Origin", r.rp.Origin)
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range q.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	if q.cookie != "" {
		hr.Header.Set("Cookie", q.cookie)
	}
	resp, err := r.srv.Client().Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// signIn signs in with a and returns the Cookie header of the session.
func (r *rig) signIn(t testing.TB, a *stepuptest.Authenticator) string {
	t.Helper()
	c, resp := r.trySignIn(t, a)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return c
}

func (r *rig) trySignIn(t testing.TB, a *stepuptest.Authenticator, tweaks ...stepuptest.Tweak) (string, *http.Response) {
	t.Helper()
	resp, b := r.do(t, req{method: "POST", path: "/inbox/signin/begin"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var begin struct {
		Options json.RawMessage `json:"options"`
		State   string          `json:"state"`
	}
	require.NoError(t, json.Unmarshal(b, &begin))
	answer, err := a.Assert(begin.Options, tweaks...)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"state": begin.State, "credential": json.RawMessage(answer)})
	require.NoError(t, err)
	resp, _ = r.do(t, req{method: "POST", path: "/inbox/signin", body: string(body)})
	for _, c := range resp.Cookies() {
		if c.Value != "" {
			return c.Name + "=" + c.Value, resp
		}
	}
	return "", resp
}

// queueOf is a queue as the inbox answers it.
type queueOf struct {
	User             string    `json:"user"`
	SessionExpiresAt time.Time `json:"session_expires_at"`
	Entries          []struct {
		ID        string          `json:"id"`
		Tool      string          `json:"tool"`
		User      string          `json:"user"`
		Agent     string          `json:"agent"`
		Group     string          `json:"group"`
		ExpiresAt time.Time       `json:"expires_at"`
		Approvers []string        `json:"approvers"`
		Others    []string        `json:"others"`
		Card      string          `json:"card"`
		Approve   json.RawMessage `json:"approve"`
		Deny      json.RawMessage `json:"deny"`
		Link      string          `json:"link"`
		Line      struct {
			Class    string `json:"class"`
			Key      string `json:"key"`
			Warnings int    `json:"warnings"`
		} `json:"line"`
		Progress struct {
			Needed   int      `json:"needed"`
			Signed   []string `json:"signed"`
			Awaited  []string `json:"awaited"`
			Sentence string   `json:"sentence"`
		} `json:"progress"`
	} `json:"entries"`
}

func (q queueOf) ids() []string {
	out := []string{}
	for _, e := range q.Entries {
		out = append(out, e.ID)
	}
	return out
}

// stream is an open event stream.
type stream struct {
	resp   *http.Response
	events chan event
	cancel context.CancelFunc
}

type event struct {
	name, data string
}

// open opens the session's event stream; it closes when the test ends.
func (r *rig) open(t testing.TB, cookie string) (*stream, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, r.srv.URL+"/inbox/events", nil)
	require.NoError(t, err)
	hr.Header.Set("Cookie", cookie)
	hr.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := r.srv.Client().Do(hr)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, resp
	}
	s := &stream{resp: resp, events: make(chan event, 64), cancel: cancel}
	go s.read()
	t.Cleanup(s.close)
	return s, resp
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// read parses events (comments and retry lines included, as "comment"
// and "retry") until the stream ends, then closes s.events.
func (s *stream) read() {
	defer close(s.events)
	br := bufio.NewReader(s.resp.Body)
	var ev event
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.name != "" {
				s.events <- ev
			}
			ev = event{}
		case strings.HasPrefix(line, ":"):
			ev = event{name: "comment", data: line}
		case strings.HasPrefix(line, "retry:"):
			ev = event{name: "retry", data: line}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// next returns the next event named name, skipping others, or fails
// after a while; ok is false when the stream ended first.
func (s *stream) next(t testing.TB, name string) (event, bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				return event{}, false
			}
			if ev.name == name {
				return ev, true
			}
		case <-timeout:
			t.Fatalf("no %q event in time", name)
		}
	}
}

// queue returns the next queue event's queue.
func (s *stream) queue(t testing.TB) queueOf {
	t.Helper()
	ev, ok := s.next(t, "queue")
	require.True(t, ok, "the stream ended")
	var q queueOf
	require.NoError(t, json.Unmarshal([]byte(ev.data), &q))
	return q
}

// until reads queue events until ok says the queue is as expected.
func (s *stream) until(t testing.TB, ok func(queueOf) bool) queueOf {
	t.Helper()
	for {
		if q := s.queue(t); ok(q) {
			return q
		}
	}
}

// ended waits for the stream to end, and reports whether an "end" event
// came first.
func (s *stream) ended(t testing.TB) bool {
	t.Helper()
	sawEnd := false
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				return sawEnd
			}
			sawEnd = sawEnd || ev.name == "end"
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}

// approveOnSite approves ticket id with a's passkey on the approval site,
// signing the challenge in the inbox entry's options.
func (r *rig) approveOnSite(t testing.TB, a *stepuptest.Authenticator, id string, options json.RawMessage) (*http.Response, []byte) {
	t.Helper()
	answer, err := a.Assert(options)
	require.NoError(t, err)
	return r.do(t, req{method: "POST", path: "/approve/" + id, body: string(answer)})
}
