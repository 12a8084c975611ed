package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestClientNamesTheTicketItWasGiven: the client puts a ticket id in the
// request path. Whatever the id holds, the server's route must read back
// that id, not another: a client that escapes an id twice waits on,
// executes or cancels a ticket nobody asked for (here one that does not
// exist, so every such call fails as not found).
func TestClientNamesTheTicketItWasGiven(t *testing.T) {
	var mu sync.Mutex
	var got []string
	mux := http.NewServeMux()
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.PathValue("id"))
		mu.Unlock()
		http.Error(w, `{"error":{"code":"not_found"}}`, http.StatusNotFound)
	}
	mux.HandleFunc("POST /v1/tickets/{id}/execute", record)
	mux.HandleFunc("POST /v1/tickets/{id}/cancel", record)
	mux.HandleFunc("GET /v1/tickets/{id}/wait", record)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := remote.NewClient(srv.URL, "token", srv.Client())
	require.NoError(t, err)

	ids := []string{"t-1", "a b", "a%2Fb", "a?b", "a#b", "a+b", "caf\u00e9", "a%b", "x;y", "[id]"}
	ctx := context.Background()
	for _, id := range ids {
		tid := stepup.TicketID(id)
		calls := map[string]func() error{
			"execute": func() error { _, err := client.Execute(ctx, tid); return err },
			"cancel":  func() error { _, err := client.Cancel(ctx, tid, ""); return err },
			"wait":    func() error { _, err := client.Wait(ctx, tid); return err },
		}
		for op, call := range calls {
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
}
