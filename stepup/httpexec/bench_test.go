package httpexec_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentstepup/asu/stepup/httpexec"
)

// BenchmarkExecute is one signed POST of a small effect to a tool on
// loopback that verifies it, and its answer.
func BenchmarkExecute(b *testing.B) {
	tl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := httpexec.Verify(r, "issue_refund", secret, time.Minute, time.Now()); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer tl.Close()
	e, err := httpexec.New("issue_refund", tl.URL, secret, nil)
	if err != nil {
		b.Fatal(err)
	}
	eff := refund("19.99")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Execute(b.Context(), eff, key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyMessage is the tool's check of one request.
func BenchmarkVerifyMessage(b *testing.B) {
	r := captured(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, time.Minute, fixedNow); err != nil {
			b.Fatal(err)
		}
	}
}
