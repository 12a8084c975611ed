package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// floorBody is the propose body of the small read_file call the hop
// benchmarks make.
var floorBody = []byte(`{"tool":"read_file","args":{"path":"q3.csv"},"task":"t-42","session":"sess-1","principal":{"user":"user:dana","agent":"agent:reports"}}`)

// bareFloor starts a server that reads a request and answers a small
// ticket, and returns a function making the two requests of a round trip
// (propose, execute) to it: the floor under any HTTP hop of that shape.
func bareFloor(b *testing.B) func() {
	answer := []byte(`{"id":"0123456789abcdef0123456789abcdef","status":"allowed","tool":"read_file"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	c := srv.Client()
	return func() {
		for _, path := range []string{"/v1/propose", "/v1/tickets/x/execute"} {
			req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(floorBody))
			require.NoError(b, err)
			req.Header.Set("Authorization", "Bearer "+agentToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			require.NoError(b, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
}
