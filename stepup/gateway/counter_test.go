package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
)

// TestCounterRegressionIsForbiddenNotUnavailable: answers one
// authenticator signed for several tickets (counters c, c+1, ..., as open
// tabs make them) posted at once are approved or refused with 403 and
// the code "counter", the clone signal: never 503, which would say the
// store failed. Posted newest first, each older one is refused so.
func TestCounterRegressionIsForbiddenNotUnavailable(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	answers := func(n int) ([]stepup.TicketID, [][]byte) {
		ids := make([]stepup.TicketID, n)
		out := make([][]byte, n)
		for i := range n {
			c := sendEmail("finance@example.com")
			c.Session = fmt.Sprintf("sess-counter-%d-%d", n, i)
			tk, err := r.Gate.Propose(ctx, c)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
			opts, _ := r.pageOptions(t, tk.ID)
			ids[i] = tk.ID
			out[i], err = r.Authenticator.Assert(opts)
			require.NoError(t, err)
		}
		return ids, out
	}
	refusedAsCounter := func(status int, body []byte, what string) {
		t.Helper()
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", what, body)
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		assert.Equal(t, gateway.CodeCounter, e.Error.Code, "%s: %s", what, body)
	}

	ids, signed := answers(3)
	resp, body := r.post(t, "/approve/"+string(ids[2]), signed[2])
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	for i := 1; i >= 0; i-- {
		resp, body := r.post(t, "/approve/"+string(ids[i]), signed[i])
		refusedAsCounter(resp.StatusCode, body, fmt.Sprintf("answer %d after answer 2", i))
	}

	ids, signed = answers(16)
	type answer struct {
		status int
		body   []byte
	}
	got := make([]answer, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			resp, body := r.post(t, "/approve/"+string(ids[i]), signed[i])
			got[i] = answer{resp.StatusCode, body}
		})
	}
	wg.Wait()
	for i, a := range got {
		if a.status == http.StatusOK {
			continue
		}
		refusedAsCounter(a.status, a.body, fmt.Sprintf("answer %d posted at once", i))
	}
}
