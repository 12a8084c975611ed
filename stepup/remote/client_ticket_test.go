package remote_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// otherIDs returns ids that are not asked but look like it: one piece
// more or less, another case, space around it, its escaped spelling,
// none at all, and a look-alike letter.
func otherIDs(asked string, r *rand.Rand) []string {
	out := []string{"", asked + idPieces[r.IntN(len(idPieces))], idPieces[r.IntN(len(idPieces))] + asked,
		" " + asked, asked + " ", strings.ToUpper(asked), strings.ToLower(asked), strings.ReplaceAll(asked, "/", "%2F"),
		strings.Replace(asked, "a", "\u0430", 1), asked + "\x00", "t-2"}
	if len(asked) > 1 {
		out = append(out, asked[:len(asked)-1], asked[1:])
	}
	kept := out[:0]
	for _, id := range out {
		if id != asked {
			kept = append(kept, id)
		}
	}
	return kept
}

// TestClientRefusesAnotherTicketsAnswer: for generated ticket ids and
// answers about ids that differ from them however little, Wait, Execute
// and Cancel refuse the answer as internal (the gateway, or something on
// its path, answered about another ticket) and return no ticket or
// result; the same answer about the asked id is taken.
func TestClientRefusesAnotherTicketsAnswer(t *testing.T) {
	var mu sync.Mutex
	answer := "" // the id the server's answers are about
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := answer
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch {
		case strings.HasSuffix(r.URL.Path, "/execute"):
			body = map[string]any{"ticket": id, "output": map[string]bool{"sent": true}, "idempotency_key": "k"}
		case strings.HasSuffix(r.URL.Path, "/cancel"):
			body = map[string]string{"id": id, "status": string(stepup.StatusCancelled), "tool": "send_email"}
		default:
			body = map[string]string{"id": id, "status": string(stepup.StatusApproved), "tool": "send_email"}
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	c, err := remote.NewClient(srv.URL, "token", nil)
	require.NoError(t, err)
	ctx := context.Background()
	methods := map[string]func(stepup.TicketID) (stepup.TicketID, error){
		"Wait": func(id stepup.TicketID) (stepup.TicketID, error) { tk, err := c.Wait(ctx, id); return tk.ID, err },
		"Execute": func(id stepup.TicketID) (stepup.TicketID, error) {
			res, err := c.Execute(ctx, id)
			return res.Ticket, err
		},
		"Cancel": func(id stepup.TicketID) (stepup.TicketID, error) { tk, err := c.Cancel(ctx, id, ""); return tk.ID, err },
	}

	r := rand.New(rand.NewPCG(3, 5))
	asked := []string{"t-1", "a", "A", "0b3f9c1e-5d7a-4f2b-9c1d-2e8f7a6b5c4d"}
	for range 60 {
		asked = append(asked, genID(r))
	}
	for _, id := range asked {
		for name, call := range methods {
			mu.Lock()
			answer = id
			mu.Unlock()
			got, err := call(stepup.TicketID(id))
			require.NoError(t, err, "%s %q: the answer about the asked ticket", name, id)
			assert.Equal(t, stepup.TicketID(id), got)

			for _, other := range otherIDs(id, r) {
				mu.Lock()
				answer = other
				mu.Unlock()
				got, err := call(stepup.TicketID(id))
				assert.ErrorIs(t, err, remote.ErrInternal, "%s %q took an answer about %q", name, id, other)
				assert.Empty(t, got, "%s %q returned ticket %q", name, id, other)
			}
		}
	}
}

// TestClientWaitRefusesAnotherTicketAfterPending: a long poll that first
// answers pending about the asked ticket, then approved about another,
// is refused, and Wait returns the asked ticket as last read.
func TestClientWaitRefusesAnotherTicketAfterPending(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		polls++
		n := polls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			_, _ = w.Write([]byte(`{"id":"t-1","status":"pending","tool":"send_email"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"t-2","status":"approved","tool":"send_email"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := remote.NewClient(srv.URL, "token", nil)
	require.NoError(t, err)
	tk, err := c.Wait(context.Background(), "t-1")
	require.ErrorIs(t, err, remote.ErrInternal)
	assert.Equal(t, stepup.TicketID("t-1"), tk.ID)
	assert.Equal(t, stepup.StatusPending, tk.Status, "the last answer about t-1 itself")
}
