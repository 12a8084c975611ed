package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/gateway"
)

// bearerSpellings are Authorization headers carrying tok: the scheme in
// each of its 64 spellings by case, and the white space the agent API
// trims around the token.
func bearerSpellings(tok string) []string {
	var out []string
	for mask := range 1 << 6 {
		b := []byte("bearer")
		for i := range b {
			if mask&(1<<i) != 0 {
				b[i] -= 'a' - 'A'
			}
		}
		out = append(out, string(b)+" "+tok)
	}
	return append(out, "Bearer  "+tok, "Bearer "+tok+" ", "Bearer \t"+tok+"\t")
}

// notBearer are Authorization headers that do not carry tok.
func notBearer(tok string) []string {
	return []string{"", "Bearer", "Bearer ", "bearer  ", "Basic " + tok, "Bearer" + tok, "Bearer\t" + tok, "Bearer:" + tok,
		"Token " + tok, " Bearer " + tok, "Bearerx " + tok, "Beare " + tok, "Bearer " + tok[:len(tok)-1], "Bearer " + tok + "x",
		"Bearer " + strings.ToUpper(tok), "Bearer " + tok + ",", "Bearer " + tok + " " + tok, "Bearer x" + tok}
}

// TestRequireBearer: the token is admitted under every spelling of the
// scheme and refused otherwise, each refusal with its challenge and the
// approval site's headers; an empty token admits nothing.
func TestRequireBearer(t *testing.T) {
	tok := strings.Repeat("0123456789abcdef", 3)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := gateway.RequireBearer([]byte(tok), "ops", ok)
	serve := func(h http.Handler, auth string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, auth := range bearerSpellings(tok) {
		w := serve(h, auth)
		assert.Equal(t, http.StatusTeapot, w.Code, "%q", auth)
		assert.Equal(t, gateway.CSP, w.Header().Get("Content-Security-Policy"), "%q", auth)
	}
	for _, auth := range notBearer(tok) {
		w := serve(h, auth)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "%q", auth)
		assert.Equal(t, `Bearer realm="ops"`, w.Header().Get("WWW-Authenticate"))
		assert.Equal(t, gateway.CSP, w.Header().Get("Content-Security-Policy"))
		assert.Equal(t, "DENY", w.Header().Get("X-Frame-Options"))
		assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
		assert.NotContains(t, w.Body.String(), tok)
	}
	empty := gateway.RequireBearer(nil, "ops", ok)
	for _, auth := range append(bearerSpellings(""), "Bearer ", "bearer") {
		assert.Equal(t, http.StatusUnauthorized, serve(empty, auth).Code, "%q", auth)
	}
}

// RequireBearer guards an operator's listener: the metrics and the
// approval figures name approvers.
func ExampleRequireBearer() {
	m, err := gateway.NewMetrics()
	if err != nil {
		panic(err)
	}
	token := []byte("a-long-random-operator-token-from-its-file")
	srv := httptest.NewServer(gateway.RequireBearer(token, "asu-operator", m))
	defer srv.Close()
	for _, auth := range []string{"", "Bearer " + string(token), "bearer " + string(token), "Basic " + string(token)} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+gateway.MetricsPath, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("%d %q\n", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// Output:
	// 401 "Bearer realm=\"asu-operator\""
	// 200 ""
	// 200 ""
	// 401 "Bearer realm=\"asu-operator\""
}
