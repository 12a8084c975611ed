package httpexec_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

// genToolNames draws n distinct catalog names, many of them near misses
// of one another: a letter's case, a character more or less, a prefix.
func genToolNames(r *rand.Rand, n int) []string {
	seen := map[string]bool{}
	var names []string
	add := func(s string) {
		if s != "" && len(s) <= 256 && !seen[s] && len(names) < n {
			seen[s] = true
			names = append(names, s)
		}
	}
	add("issue_refund")
	add("send_email")
	for len(names) < n {
		base := names[r.IntN(len(names))]
		switch r.IntN(5) {
		case 0:
			add(base + string(rune('!'+r.IntN(94))))
		case 1:
			add(base[:len(base)-1])
		case 2:
			i := r.IntN(len(base))
			add(base[:i] + strings.ToUpper(base[i:i+1]) + base[i+1:])
		case 3:
			add(string(rune('!'+r.IntN(94))) + base)
		default:
			var b strings.Builder
			for range 1 + r.IntN(20) {
				b.WriteByte(byte('!' + r.IntN(94)))
			}
			add(b.String())
		}
	}
	return names
}

// TestVerifyAcceptsOnlyItsOwnTool: one secret shared by generated tools,
// as a service may share it; every request signed for one of them is
// checked by every tool's verifier. Only the tool it was signed for
// accepts it; every other refuses it with ErrWrongTool, naming both.
func TestVerifyAcceptsOnlyItsOwnTool(t *testing.T) {
	tools := genToolNames(rand.New(rand.NewPCG(5, 6)), 40)
	type signedRequest struct {
		tool string
		got  received
	}
	var reqs []signedRequest
	for i, tool := range tools {
		tr := &transport{}
		e, err := httpexec.New(tool, "http://tools.invalid/x", secret, &httpexec.Options{Now: clock, Client: &http.Client{Transport: tr}})
		require.NoError(t, err, "tool %q", tool)
		eff := refund("19.99")
		eff.Tool = tool
		_, err = e.Execute(plug.WithTicket(t.Context(), "t_1"), eff, fmt.Sprintf("k-%d", i))
		require.NoError(t, err)
		reqs = append(reqs, signedRequest{tool, tr.last})
	}
	for _, req := range reqs {
		for _, guard := range tools {
			got, err := httpexec.VerifyMessage(req.got.header, req.got.body, guard, secret, time.Minute, fixedNow)
			if guard == req.tool {
				require.NoError(t, err, "%q at its own verifier", req.tool)
				assert.Equal(t, guard, got.Tool)
				continue
			}
			require.ErrorIs(t, err, httpexec.ErrWrongTool, "%q at the verifier of %q", req.tool, guard)
			assert.Equal(t, httpexec.Request{}, got, "nothing of a refused request is returned")
			assert.Contains(t, err.Error(), req.tool)
			assert.Contains(t, err.Error(), guard)
		}
	}
}

// TestVerifyRefusesAForgedRequestForAnotherToolAsUnsigned: the tool check
// follows the signature's, so ErrWrongTool always means "the gate signed
// this, for another tool"; a request whose Asu-Tool was only edited is a
// bad signature.
func TestVerifyRefusesAForgedRequestForAnotherToolAsUnsigned(t *testing.T) {
	r := captured(t)
	h := r.header.Clone()
	h.Set(httpexec.HeaderTool, "send_email")
	_, err := httpexec.VerifyMessage(h, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.ErrorIs(t, err, httpexec.ErrBadSignature)
	_, err = httpexec.VerifyMessage(h, r.body, "send_email", secret, time.Minute, fixedNow)
	require.ErrorIs(t, err, httpexec.ErrBadSignature)
}

// TestVerifyNeedsAToolName: a verifier told no tool, or a name no
// Executor could sign, refuses everything: a configuration error, not a
// refusal of the request.
func TestVerifyNeedsAToolName(t *testing.T) {
	r := captured(t)
	for _, tool := range []string{"", " ", "issue_refund\n", "issue refund", "\u00e9", strings.Repeat("x", 257)} {
		_, err := httpexec.VerifyMessage(r.header, r.body, tool, secret, time.Minute, fixedNow)
		require.Error(t, err, "%q", tool)
		for _, refusal := range []error{httpexec.ErrMalformed, httpexec.ErrBadSignature, httpexec.ErrWrongTool, httpexec.ErrStale} {
			assert.False(t, errors.Is(err, refusal), "%q: %v", tool, err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(r.body))
		req.Header = r.header.Clone()
		_, err = httpexec.Verify(req, tool, secret, time.Minute, fixedNow)
		require.Error(t, err, "%q", tool)
	}
}
