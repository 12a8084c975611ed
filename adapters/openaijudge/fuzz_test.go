package openaijudge_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/agentstepup/asu/adapters/openaijudge"
)

// cannedTransport answers every request with one status and body, off the
// network.
type cannedTransport struct {
	status int
	body   []byte
}

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: -1, Request: r}, nil
}

// FuzzComplete feeds arbitrary response bodies: Complete never panics,
// and what it returns as content is no longer than the body it came in.
func FuzzComplete(f *testing.F) {
	f.Add(200, []byte(completion(`{"decision":"approve","reason":"x"}`)))
	f.Add(200, []byte(`{"choices":[{"message":{"content":null}}]}`))
	f.Add(200, []byte(`{"choices":[]}`))
	f.Add(200, []byte(`{"choices":[{"message":{"content":{"a":1},"refusal":7}}]}`))
	f.Add(500, []byte(`{"error":{"message":"x"}}`))
	f.Add(200, []byte(`null`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			status = 200
		}
		m, err := openaijudge.New("judge-test", &openaijudge.Options{
			BaseURL:          "http://judge.invalid/v1",
			HTTPClient:       &http.Client{Transport: cannedTransport{status: status, body: body}},
			MaxResponseBytes: 4096,
		})
		if err != nil {
			t.Fatal(err)
		}
		content, err := m.Complete(context.Background(), "system", "user")
		if err == nil && len(content) > len(body) {
			t.Fatalf("content longer than the body")
		}
	})
}
