package gateway_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
)

// A runtime token has at most MaxWaiters long polls open at once; one more
// is refused with 429 "busy" until a slot frees, so one runtime cannot pile
// up polls that each read the shared store.
func TestLongPollsPerTokenAreBounded(t *testing.T) {
	r := newRig(t, &gateway.AgentOptions{MaxWaiters: 2})
	tk, err := r.client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	wait := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", r.api.URL+"/v1/tickets/"+string(tk.ID)+"/wait?timeout=20s", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+agentToken)
		return http.DefaultClient.Do(req)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			if resp, err := wait(ctx); err == nil {
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
	}
	busy := func() bool { // a poll admitted before the two are open just times out
		short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		resp, err := wait(short)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusTooManyRequests
	}
	require.Eventually(t, busy, 5*time.Second, 10*time.Millisecond, "a third poll is refused while two are open")

	cancel()
	<-done
	<-done
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	resp, err := wait(short)
	if err == nil {
		defer resp.Body.Close()
		assert.NotEqual(t, http.StatusTooManyRequests, resp.StatusCode)
	}
	// A poll that is admitted blocks until the short context ends.
	assert.ErrorIs(t, err, context.DeadlineExceeded, "once the two polls end, a new one is admitted and waits")
}
