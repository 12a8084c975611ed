package remote_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// idPieces are the parts generated ticket ids are made of: characters a
// URL gives meaning to, escapes, relative steps and non-ASCII text.
var idPieces = []string{"a", "Z", "0", "-", "_", " ", "?", "#", "%", "%2F", "%25", "/", "//", ".", "..", "+", ";",
	"&", "=", "[", "]", "@", ":", "~", "\u00e9", "\u65e5", "\U0001F600", "\u202e", "\t", "\\", "'", "\""}

// genID returns a random ticket id of one to eight pieces.
func genID(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(8) {
		b.WriteString(idPieces[r.IntN(len(idPieces))])
	}
	return b.String()
}

// TestClientSendsAnyIDAsOneSegment: for generated ids, and for ids made
// only of relative steps, every ticket route the client calls reads back
// exactly the id the client was given.
func TestClientSendsAnyIDAsOneSegment(t *testing.T) {
	var mu sync.Mutex
	var got []string
	// The server reads the escaped path itself, segment by segment, so
	// what is checked is what the client sent, not how a router cleans it.
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(r.URL.EscapedPath(), "/")
		id := "<not one segment>"
		if len(segs) == 6 && segs[1] == "base" && segs[2] == "v1" && segs[3] == "tickets" {
			if v, err := url.PathUnescape(segs[4]); err == nil {
				id = v
			}
		}
		mu.Lock()
		got = append(got, id)
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found"}}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL+"/base/", "token", srv.Client())
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(7, 11))
	ids := []string{".", "..", "...", "../..", "./x", "x/..", "%2E%2E", "a b"}
	for range 300 {
		ids = append(ids, genID(r))
	}
	ctx := context.Background()
	for _, id := range ids {
		tid := stepup.TicketID(id)
		for op, call := range map[string]func() error{
			"execute": func() error { _, err := client.Execute(ctx, tid); return err },
			"cancel":  func() error { _, err := client.Cancel(ctx, tid, ""); return err },
			"wait":    func() error { _, err := client.Wait(ctx, tid); return err },
		} {
			mu.Lock()
			got = nil
			mu.Unlock()
			require.ErrorIs(t, call(), stepup.ErrNotFound, "%s %q", op, id)
			mu.Lock()
			if assert.Len(t, got, 1, "%s %q reached no route", op, id) {
				assert.Equal(t, id, got[0], "%s of ticket %q named another ticket", op, id)
			}
			mu.Unlock()
		}
	}

	// No ticket has an empty id: the client sends nothing.
	mu.Lock()
	got = nil
	mu.Unlock()
	_, err = client.Execute(ctx, "")
	require.ErrorIs(t, err, stepup.ErrNotFound)
	assert.Empty(t, got)
}

// TestClientKeepsTheBasePathAsWritten: a base URL's path reaches the
// server escaped as it was written, with or without a trailing slash:
// an escaped slash or space in any of its segments, the last included,
// stays one segment.
func TestClientKeepsTheBasePathAsWritten(t *testing.T) {
	var mu sync.Mutex
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.URL.EscapedPath()
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found"}}`))
	}))
	t.Cleanup(srv.Close)
	for _, base := range []string{"", "/a", "/a%2Fb", "/a%2Fb/c", "/x/a%2Fb", "/a%20b", "/%2F", "/a%2F", "/caf%C3%A9", "/a/b%3Fc"} {
		for _, slash := range []string{"", "/", "//", "///"} {
			client, err := remote.NewClient(srv.URL+base+slash, "token", srv.Client())
			require.NoError(t, err)
			_, err = client.Execute(context.Background(), "t-1")
			require.ErrorIs(t, err, stepup.ErrNotFound)
			mu.Lock()
			assert.Equal(t, base+"/v1/tickets/t-1/execute", got, "base %q", base+slash)
			mu.Unlock()
		}
	}
}

// TestClientRefusesABaseURLBeyondAPath: a base URL with a query, a
// fragment or user information, in any spelling, is refused when the
// client is made, since the client sends none of them; the same URLs
// without them are taken.
func TestClientRefusesABaseURLBeyondAPath(t *testing.T) {
	for _, host := range []string{"127.0.0.1:8700", "gate.example", "[::1]:8700"} {
		for _, path := range []string{"", "/", "/a", "/a%2Fb/", "/caf%C3%A9", "/a/b%3Fc%23d"} {
			base := "http://" + host + path
			_, err := remote.NewClient(base, "token", nil)
			require.NoError(t, err, base)
			for _, extra := range []string{"?", "?a=1", "?token=x", "#", "#f", "?#", "?a#b", "/?x"} {
				_, err := remote.NewClient(base+extra, "token", nil)
				require.ErrorIs(t, err, stepup.ErrConfig, base+extra)
			}
			for _, user := range []string{"@", "u@", "u:p@", "u%40evil@", ":@", "gate.example@"} {
				_, err := remote.NewClient("http://"+user+host+path, "token", nil)
				require.ErrorIs(t, err, stepup.ErrConfig, "http://"+user+host+path)
			}
		}
	}
}
