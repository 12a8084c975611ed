package remote

import (
	"errors"
	"testing"

	"github.com/agentstepup/asu/stepup"
)

// FuzzDecodeError: a refusal's body, whatever the server sent, decodes
// without panicking into an *Error that unwraps to known sentinels only
// and keeps a bounded list of other codes.
func FuzzDecodeError(f *testing.F) {
	f.Add(503, []byte(`{"error":{"code":"outcome_unknown","also":["store"]}}`))
	f.Add(404, []byte(`{"error":{"code":"not_found","also":["store","nope",""],"message":"m"}}`))
	f.Add(500, []byte(`<html>proxy</html>`))
	f.Add(401, []byte(`{}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		err := decodeError(status, body)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("not an *Error: %v", err)
		}
		if len(e.Also) > maxAlso {
			t.Fatalf("kept %d other codes", len(e.Also))
		}
		for _, s := range e.Unwrap() {
			known := s == ErrInternal
			for _, c := range append(codes, runtimeCodes...) {
				known = known || s == c.Err
			}
			if !known {
				t.Fatalf("unwraps to an unknown error %v", s)
			}
		}
		_ = errors.Is(err, stepup.ErrStore)
	})
}
