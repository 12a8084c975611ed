package httpexec_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/httpexec"
)

// FuzzVerifyMessage feeds the verifier any headers and body. With sign
// set, the body is signed as a holder of the secret would, so the fuzzer
// reaches the body's parser. Whatever it is fed, the verifier does not
// panic, a verifier of issue_refund accepts nothing for another tool, and
// what a verifier of the signed tool accepts is an effect that hashes to
// the digest it reports, of that tool, under the signed key.
func FuzzVerifyMessage(f *testing.F) {
	r := captured(f)
	f.Add(r.header.Get(httpexec.HeaderSignature), "issue_refund", key, r.body, false)
	f.Add("", "issue_refund", key, r.body, true)
	f.Add("t=1800000000,v1=00", "x", "y", []byte(`{"digest":"00","effect":{},"idempotency_key":"y","ticket":""}`), true)
	f.Add("t=01,v1=zz,v1=,t=2", "a b", "", []byte("{"), false)
	f.Fuzz(func(t *testing.T, sig, tool, idem string, body []byte, sign bool) {
		h := http.Header{}
		h.Set(httpexec.HeaderTool, tool)
		h.Set(httpexec.HeaderIdempotencyKey, idem)
		h.Set(httpexec.HeaderSignature, sig)
		if sign {
			h = signed(h, body, fixedNow)
		}
		if _, err := httpexec.VerifyMessage(h, body, "issue_refund", secret, time.Minute, fixedNow); err == nil {
			require.Equal(t, "issue_refund", tool, "a verifier accepts only requests for its own tool")
		}
		req, err := httpexec.VerifyMessage(h, body, tool, secret, time.Minute, fixedNow)
		if err != nil {
			return
		}
		require.Equal(t, tool, req.Tool)
		require.Equal(t, idem, req.IdempotencyKey)
		s, err := canon.Seal(req.Effect)
		require.NoError(t, err)
		require.True(t, s.Digest().Equal(req.Digest))
		require.True(t, strings.Contains(string(body), `"effect":`+string(s.Bytes())+`,`))
	})
}
