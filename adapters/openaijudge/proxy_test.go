package openaijudge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/adapters/openaijudge"
)

// TestDefaultClientUsesNoProxy runs a child process with HTTP_PROXY and
// HTTPS_PROXY naming a proxy: the default client's request, key and
// all, never reaches the proxy, while a client that reads the
// environment, asked in the same child, does (so the proxy would have
// seen the first).
func TestDefaultClientUsesNoProxy(t *testing.T) {
	if os.Getenv("OPENAIJUDGE_PROXY_CHILD") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		base := "http://judge.invalid:8080/v1" // not loopback, which no proxy is used for
		for key, client := range map[string]*http.Client{
			"sk-default-client":   nil,
			"sk-proxying-control": {Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}},
		} {
			m, err := openaijudge.New("judge", &openaijudge.Options{BaseURL: base, APIKey: key, HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = m.Complete(ctx, "s", "u")
		}
		return
	}
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusBadGateway)
	}))
	defer proxy.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultClientUsesNoProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OPENAIJUDGE_PROXY_CHILD=1",
		"HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seen, "\n")
	assert.Contains(t, all, "sk-proxying-control", "the control reached the proxy")
	assert.NotContains(t, all, "sk-default-client", "the default client's key reached the environment's proxy")
}
