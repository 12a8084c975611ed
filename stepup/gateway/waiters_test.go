package gateway_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
)

// A runtime token has at most MaxWaiters long polls open at once; one more
// is refused with 429 "busy" until a slot frees, so one runtime cannot pile
// up polls that each read the shared store.
func TestLongPollsPerTokenAreBounded(t *testing.T) {
	r := newRig(t, &gateway.AgentOptions{MaxWaiters: 1})
	tk, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	wait := func(ctx context.Context, timeout string) int {
		req, err := http.NewRequestWithContext(ctx, "GET",
			r.api.URL+"/v1/tickets/"+string(tk.ID)+"/wait?timeout="+timeout, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+agentToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	// One poll held open (re-asked if a probe held the slot first).
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() {
		defer close(held)
		for ctx.Err() == nil {
			wait(ctx, "20s")
		}
	}()
	// A probe either is refused at once or, admitted, answers "pending"
	// when its own one-millisecond bound ends.
	probe := func() int { return wait(context.Background(), "1ms") }
	require.Eventually(t, func() bool { return probe() == http.StatusTooManyRequests }, 10*time.Second, 50*time.Millisecond,
		"a second poll is refused while one is open")

	cancel()
	<-held
	require.Eventually(t, func() bool { return probe() == http.StatusOK }, 10*time.Second, 50*time.Millisecond,
		"once the poll ends, a new one is admitted")
}
