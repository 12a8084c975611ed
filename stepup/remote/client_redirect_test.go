package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// redirectToken is the runtime token of these tests: no request other
// than the first, to the base URL, may carry it.
const redirectToken = "rt-redirect-0123456789"

// origin answers every route of the agent API as the gateway would, about
// the ticket its path names, and counts the requests it is sent.
type origin struct {
	mu    sync.Mutex
	seen  []string // method and path of each request
	authz []string // its Authorization header
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen = append(o.seen, r.Method+" "+r.URL.Path)
	o.authz = append(o.authz, r.Header.Get("Authorization"))
	o.mu.Unlock()
	answerAbout(w, r)
}

func (o *origin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

func (o *origin) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen, o.authz = nil, nil
}

// answerAbout writes the 200 answer of the route r names, about the
// ticket in its path: a success the client must never take from anyone
// but the gateway at its base URL.
func answerAbout(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.TrimSuffix(r.URL.EscapedPath(), "/"), "/")
	op := segs[len(segs)-1]
	id := "t-new"
	if len(segs) >= 3 {
		id, _ = url.PathUnescape(segs[len(segs)-2])
	}
	w.Header().Set("Content-Type", "application/json")
	var body any
	switch op {
	case "execute":
		body = map[string]any{"ticket": id, "output": map[string]bool{"sent": true}, "idempotency_key": "k"}
	case "cancel":
		body = map[string]string{"id": id, "status": string(stepup.StatusCancelled), "tool": "send_email"}
	case "propose":
		body = map[string]string{"id": id, "status": string(stepup.StatusAllowed), "tool": "send_email"}
	default:
		body = map[string]string{"id": id, "status": string(stepup.StatusApproved), "tool": "send_email"}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// redirector is a gateway that answers every request under /rNNN/ with
// a redirect of status NNN to to (the same path, less that prefix), and
// serves the agent API itself under /same/, its own origin.
type redirector struct {
	to   func() string
	mu   sync.Mutex
	seen int
	own  origin // what it serves under /same/
}

func (g *redirector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/same/"); ok {
		r.URL.Path = "/" + rest
		g.own.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	g.seen++
	g.mu.Unlock()
	first, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	status, err := strconv.Atoi(strings.TrimPrefix(first, "r"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Location", g.to()+"/"+rest)
	w.WriteHeader(status)
	// A body shaped like a refusal of the API: a redirect's body is
	// never read as the gate's answer either.
	_, _ = w.Write([]byte(`{"error":{"code":"consumed","message":"from the redirect"}}`))
}

func (g *redirector) requests() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen
}

func (g *redirector) reset() {
	g.mu.Lock()
	g.seen = 0
	g.mu.Unlock()
	g.own.reset()
}

// TestClientRefusesRedirects: whatever redirect the gateway answers
// (every redirect status), to wherever (another port of the same host,
// plain http on the same host, another host name, or its own origin),
// every method of the client fails with an internal *Error carrying the
// redirect's status, sends nothing to the redirect's target (the runtime
// token above all), and takes no answer from it as the gate's; with the
// client's default http.Client, with a caller's, and with a caller's
// that follows every redirect itself.
func TestClientRefusesRedirects(t *testing.T) {
	elsewhere := &origin{}
	other := httptest.NewServer(elsewhere) // another port, or host name, of the same machine
	t.Cleanup(other.Close)

	plain := &redirector{}
	plainGW := httptest.NewServer(plain)
	t.Cleanup(plainGW.Close)
	secure := &redirector{}
	secureGW := httptest.NewTLSServer(secure)
	t.Cleanup(secureGW.Close)
	require.True(t, strings.HasPrefix(secureGW.URL, "https://127.0.0.1:"))
	require.True(t, strings.HasPrefix(other.URL, "http://127.0.0.1:"))

	targets := []struct {
		name string
		gw   *httptest.Server
		g    *redirector
		to   string
		tls  bool
	}{
		{"another port", plainGW, plain, other.URL, false},
		{"http downgrade", secureGW, secure, other.URL, true},
		{"another host", plainGW, plain, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), false},
		{"same origin", plainGW, plain, plainGW.URL + "/same", false},
	}
	follows := func(*http.Request, []*http.Request) error { return nil }
	clients := []struct {
		name string
		hc   func(gw *httptest.Server) *http.Client // nil: the client's own
	}{
		{"default", nil},
		{"caller's", func(gw *httptest.Server) *http.Client { return &http.Client{Transport: gw.Client().Transport} }},
		{"caller's that follows", func(gw *httptest.Server) *http.Client {
			return &http.Client{Transport: gw.Client().Transport, CheckRedirect: follows}
		}},
	}
	call := stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"a@example.com"}`), Session: "s-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	methods := map[string]func(context.Context, *remote.Client) error{
		"Propose": func(ctx context.Context, c *remote.Client) error { _, err := c.Propose(ctx, call); return err },
		"Wait":    func(ctx context.Context, c *remote.Client) error { _, err := c.Wait(ctx, "t-1"); return err },
		"Execute": func(ctx context.Context, c *remote.Client) error { _, err := c.Execute(ctx, "t-1"); return err },
		"Cancel":  func(ctx context.Context, c *remote.Client) error { _, err := c.Cancel(ctx, "t-1", "no"); return err },
	}
	statuses := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect}

	for _, status := range statuses {
		for _, target := range targets {
			for _, cl := range clients {
				if cl.hc == nil && target.tls {
					continue // the default client does not trust the test server's certificate
				}
				for name, method := range methods {
					t.Run(strconv.Itoa(status)+"/"+target.name+"/"+cl.name+"/"+name, func(t *testing.T) {
						target.g.to = func() string { return target.to }
						target.g.reset()
						elsewhere.reset()
						var hc *http.Client
						if cl.hc != nil {
							hc = cl.hc(target.gw)
						}
						c, err := remote.NewClient(target.gw.URL+"/r"+strconv.Itoa(status), redirectToken, hc)
						require.NoError(t, err)

						err = method(t.Context(), c)
						require.Error(t, err, "a redirect's target answered for the gate")
						var re *remote.Error
						require.True(t, errors.As(err, &re), "%T: %v", err, err)
						assert.Equal(t, status, re.Status)
						assert.ErrorIs(t, err, remote.ErrInternal)
						assert.NotErrorIs(t, err, stepup.ErrConsumed, "the redirect's body is no refusal of the gate")
						assert.Contains(t, err.Error(), "redirect")
						assert.NotContains(t, err.Error(), redirectToken)

						assert.Equal(t, 1, target.g.requests(), "one request, to the base URL")
						assert.Empty(t, elsewhere.requests(), "the redirect's target was sent a request")
						assert.Empty(t, target.g.own.requests(), "a redirect within the origin was followed")
						if hc != nil && hc.CheckRedirect != nil {
							assert.NoError(t, hc.CheckRedirect(nil, nil), "the caller's client is left as it was")
						} else if hc != nil {
							assert.Nil(t, hc.CheckRedirect, "the caller's client is left as it was")
						}
					})
				}
			}
		}
	}
}

// TestClientTakesAnswersOnlyFromItsBaseURL: the control of
// TestClientRefusesRedirects: the same routes answered at the base URL
// itself succeed, so what the redirects fail on is the redirect.
func TestClientTakesAnswersOnlyFromItsBaseURL(t *testing.T) {
	own := &origin{}
	srv := httptest.NewServer(own)
	t.Cleanup(srv.Close)
	c, err := remote.NewClient(srv.URL, redirectToken, nil)
	require.NoError(t, err)
	ctx := t.Context()
	_, err = c.Wait(ctx, "t-1")
	require.NoError(t, err)
	res, err := c.Execute(ctx, "t-1")
	require.NoError(t, err)
	assert.Equal(t, stepup.TicketID("t-1"), res.Ticket)
	_, err = c.Cancel(ctx, "t-1", "")
	require.NoError(t, err)
	assert.Len(t, own.requests(), 3)
}
