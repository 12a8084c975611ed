package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/memory"
)

// ExampleNew mounts the inbox beside the approval site, on its listener
// and origin. An approver signs in with their passkey and reads their
// queue; each entry carries the ticket's own request options, which the
// page signs with the passkey and posts to the ticket's page on the site.
func ExampleNew() {
	ctx := context.Background()
	st := memory.New(nil)
	rp := stepuptest.RP()
	approver, err := passkey.New(st, rp)
	if err != nil {
		panic(err)
	}
	enroll, err := passkey.NewEnrollment(st, rp)
	if err != nil {
		panic(err)
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), approver)
	if err != nil {
		panic(err)
	}
	dana, err := stepuptest.Enroll(ctx, enroll, "user:dana")
	if err != nil {
		panic(err)
	}
	signIn, err := passkey.NewSignIn(approver)
	if err != nil {
		panic(err)
	}
	in, err := inbox.New(g.Desk(), signIn, rp, nil)
	if err != nil {
		panic(err)
	}
	site, err := gateway.NewSite(g.Desk(), enroll, rp, nil)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle(in.Prefix()+"/", in)
	mux.Handle("/", site)
	srv := httptest.NewServer(inbox.Secure(mux)) // the mux's own redirects carry the headers too
	defer srv.Close()
	defer in.Drain()

	if _, err := g.Propose(ctx, stepuptest.SendEmail("finance@example.com")); err != nil {
		panic(err)
	}

	// What the inbox page does, as a program: begin, sign with the
	// passkey, finish; the answer sets the session cookie.
	post := func(path, body string) *http.Response {
		r, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		r.Header.Set("Origin", rp.Origin)
		r.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(r)
		if err != nil {
			panic(err)
		}
		return resp
	}
	var begin struct {
		Options json.RawMessage `json:"options"`
		State   string          `json:"state"`
	}
	resp := post("/inbox/signin/begin", "")
	_ = json.NewDecoder(resp.Body).Decode(&begin)
	resp.Body.Close()
	answer, err := dana.Assert(begin.Options)
	if err != nil {
		panic(err)
	}
	body, _ := json.Marshal(map[string]any{"state": begin.State, "credential": json.RawMessage(answer)})
	resp = post("/inbox/signin", string(body))
	resp.Body.Close()
	cookie := resp.Cookies()[0]
	fmt.Println(resp.StatusCode, cookie.Name, cookie.HttpOnly, cookie.SameSite == http.SameSiteStrictMode)

	r, _ := http.NewRequest(http.MethodGet, srv.URL+"/inbox/queue", nil)
	r.AddCookie(cookie)
	resp, err = srv.Client().Do(r)
	if err != nil {
		panic(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var q struct {
		User    string `json:"user"`
		Entries []struct {
			Tool   string   `json:"tool"`
			Others []string `json:"others"`
			Link   string   `json:"link"`
		} `json:"entries"`
	}
	_ = json.Unmarshal(raw, &q)
	fmt.Println(q.User, len(q.Entries), q.Entries[0].Tool, len(q.Entries[0].Others), strings.HasPrefix(q.Entries[0].Link, "/approve/"))
	// Output:
	// 200 __Host-asu-inbox true true
	// user:dana 1 send_email 0 true
}

// Secure gives the responses a mux answers itself, such as the redirect
// to the inbox's trailing slash, the approval site's headers.
func ExampleSecure() {
	mux := http.NewServeMux()
	mux.Handle("/inbox/", http.NotFoundHandler()) // the inbox, in a program
	srv := httptest.NewServer(inbox.Secure(mux))
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(srv.URL + "/inbox")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
	fmt.Println(resp.Header.Get("Content-Security-Policy") == inbox.CSP, resp.Header.Get("X-Frame-Options"), resp.Header.Get("Cache-Control"))
	// Output:
	// 307 /inbox/
	// true DENY no-store
}

// ExampleLink is the inbox's address on the approval site's origin, to
// hand approvers (a bookmark, a notification's footer).
func ExampleLink() {
	fmt.Println(inbox.Link("https://approve.example.com", inbox.DefaultPrefix))
	// Output:
	// https://approve.example.com/inbox/
}

// Replicas behind one load balancer share the session key and the gate's
// store: a session signed in on one works on the other, and signed out
// on either it is over on both, and on any replica started later.
func ExampleOptions_replicas() {
	ctx := context.Background()
	st := memory.New(nil) // the store every replica's gate shares
	rp := stepuptest.RP()
	key := []byte("the session key of every replica, 32+ bytes") // Options.Key, from a secret store
	replica := func() *inbox.Inbox {
		approver, _ := passkey.New(st, rp)
		g, _ := gate.New(st, stepuptest.SeedCatalog(), approver)
		signIn, _ := passkey.NewSignIn(approver)
		in, err := inbox.New(g.Desk(), signIn, rp, &inbox.Options{Key: key})
		if err != nil {
			panic(err)
		}
		return in
	}
	one, two := replica(), replica()
	enroll, _ := passkey.NewEnrollment(st, rp)
	dana, _ := stepuptest.Enroll(ctx, enroll, "user:dana")

	send := func(in *inbox.Inbox, method, path, body string, cookie *http.Cookie) *http.Response {
		r := httptest.NewRequest(method, rp.Origin+path, strings.NewReader(body))
		r.Header.Set("Origin", rp.Origin)
		r.Header.Set("Content-Type", "application/json")
		if cookie != nil {
			r.AddCookie(cookie)
		}
		w := httptest.NewRecorder()
		in.ServeHTTP(w, r)
		return w.Result()
	}
	var begin struct {
		Options json.RawMessage `json:"options"`
		State   string          `json:"state"`
	}
	_ = json.NewDecoder(send(one, http.MethodPost, "/inbox/signin/begin", "", nil).Body).Decode(&begin)
	answer, _ := dana.Assert(begin.Options)
	body, _ := json.Marshal(map[string]any{"state": begin.State, "credential": json.RawMessage(answer)})
	cookie := send(one, http.MethodPost, "/inbox/signin", string(body), nil).Cookies()[0]

	fmt.Println(send(two, http.MethodGet, "/inbox/queue", "", cookie).StatusCode)
	fmt.Println(send(two, http.MethodPost, "/inbox/signout", "", cookie).StatusCode)
	fmt.Println(send(one, http.MethodGet, "/inbox/queue", "", cookie).StatusCode)
	fmt.Println(send(replica(), http.MethodGet, "/inbox/queue", "", cookie).StatusCode)
	// Output:
	// 200
	// 200
	// 401
	// 401
}
