package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestServeShutsDownWithoutLeaks: both listeners serve until the context
// ends; a long poll in flight is drained rather than holding the shutdown
// up, and afterwards no goroutine of the servers, handlers or client is
// left.
func TestServeShutsDownWithoutLeaks(t *testing.T) {
	h := stepuptest.NewGate(t, nil)
	before := runtime.NumGoroutine()

	inner, err := gateway.NewAgentAPI(h.Gate, []gateway.RuntimeToken{{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana"}}}, nil)
	require.NoError(t, err)
	api := &signalling{AgentAPI: inner, waiting: make(chan struct{})}
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), nil)
	require.NoError(t, err)
	agentLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	siteLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	agentSrv := gateway.NewServer(api, api.MaxWait())
	assert.Greater(t, agentSrv.WriteTimeout, api.MaxWait(), "a long poll is never cut off by the write timeout")
	assert.NotZero(t, agentSrv.ReadHeaderTimeout)
	assert.NotZero(t, agentSrv.IdleTimeout)
	assert.NotZero(t, agentSrv.MaxHeaderBytes)

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 2)
	go func() { served <- gateway.Serve(ctx, agentSrv, agentLn) }()
	go func() { served <- gateway.Serve(ctx, gateway.NewServer(site, 0), siteLn) }()

	tr := &http.Transport{}
	client, err := remote.NewClient("http://"+agentLn.Addr().String(), agentToken, &http.Client{Transport: tr})
	require.NoError(t, err)
	tk, err := client.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	resp, err := http.Get("http://" + siteLn.Addr().String() + "/approve/" + string(tk.ID))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// A long poll of a minute is in flight when the shutdown begins: the
	// drain answers it with the ticket as it stands. Without the drain,
	// Shutdown would wait out its grace and then cut the connection.
	type answer struct {
		status int
		body   string
		err    error
	}
	polled := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+agentLn.Addr().String()+"/v1/tickets/"+string(tk.ID)+"/wait?timeout=1m", nil)
		req.Header.Set("Authorization", "Bearer "+agentToken)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			polled <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		polled <- answer{resp.StatusCode, string(b), err}
	}()
	<-api.waiting
	cancel()
	for range 2 {
		select {
		case err := <-served:
			assert.NoError(t, err)
		case <-time.After(2 * gateway.ShutdownGrace):
			t.Fatal("Serve did not return after its context ended")
		}
	}
	got := <-polled
	require.NoError(t, got.err, "the poll was cut off instead of drained")
	assert.Equal(t, http.StatusOK, got.status)
	assert.Contains(t, got.body, `"status":"pending"`, "the drained poll answered with the ticket as it stood")
	tr.CloseIdleConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()

	var now int
	for range 100 {
		if now = runtime.NumGoroutine(); now <= before {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if now > before {
		buf := make([]byte, 1<<16)
		t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
	assert.LessOrEqual(t, now, before, "goroutines left after shutdown")
}

// signalling is an agent API that says when a long poll arrived; Drain is
// still the API's own.
type signalling struct {
	*gateway.AgentAPI
	waiting chan struct{}
	once    sync.Once
}

func (s *signalling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/wait") {
		s.once.Do(func() { close(s.waiting) })
	}
	s.AgentAPI.ServeHTTP(w, r)
}
