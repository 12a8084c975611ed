package httpexec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

// transport answers every request itself, keeping the last one.
type transport struct{ last received }

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	tr.last = received{header: r.Header.Clone(), body: b}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{}`)), Header: http.Header{}}, nil
}

// genString draws strings JSON writers treat differently: HTML
// characters, line and paragraph separators, controls, astral planes.
func genString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "<", ">", "&", `"`, `\`, "/", "\u2028", "\u2029", "\u00e9", "e\u0301", "\U0001F600",
		"\x01", "\t", "\n", " ", "ü", "日本", "\u202e", "0", "%", "'", "=", ","}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// genValue draws a JSON value canon accepts, nested up to depth.
func genValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case k == 0 && depth > 0:
		m := map[string]any{}
		for range r.IntN(4) {
			m[genString(r)] = genValue(r, depth-1)
		}
		return m
	case k == 1 && depth > 0:
		var a []any
		for range r.IntN(4) {
			a = append(a, genValue(r, depth-1))
		}
		return a
	case k == 2:
		return json.Number([]string{"0", "-1", "19.99", "0.1", "1e21", "123456789", "-0.5", "1.5e-7"}[r.IntN(8)])
	case k == 3:
		return r.IntN(2) == 0
	case k == 4:
		return nil
	}
	return genString(r)
}

// TestGeneratedEffectsArriveExactlyAsStored: for thousands of generated
// effects, the body the tool receives verifies and carries exactly the
// canonical bytes whose digest was approved.
func TestGeneratedEffectsArriveExactlyAsStored(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tr := &transport{}
	e, err := httpexec.New("tool", "http://tool.invalid/x", secret, &httpexec.Options{Now: clock, Client: &http.Client{Transport: tr}})
	require.NoError(t, err)
	checked := 0
	for i := range 3000 {
		args := map[string]any{}
		for range 1 + r.IntN(5) {
			args[genString(r)] = genValue(r, 3)
		}
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		eff := canon.Effect{Tool: "tool", Args: raw, Task: genString(r), Step: genString(r),
			Principal:     canon.Principal{User: "user:u" + fmt.Sprint(i), Agent: "agent:a"},
			PolicyVersion: genString(r), Audience: "tool"}
		s, err := canon.Seal(eff)
		if err != nil {
			continue // canon refuses it: so would the gate, at propose
		}
		key := fmt.Sprintf("k-%d-%x", i, r.Uint64())
		_, err = e.Execute(plug.WithTicket(t.Context(), "t_1"), eff, key)
		require.NoError(t, err)
		req, err := httpexec.VerifyMessage(tr.last.header, tr.last.body, "tool", secret, time.Minute, fixedNow)
		require.NoError(t, err, "%s", tr.last.body)
		require.True(t, s.Digest().Equal(req.Digest))
		again, err := canon.Seal(req.Effect)
		require.NoError(t, err)
		require.Equal(t, s.Bytes(), again.Bytes())
		require.True(t, bytes.Contains(tr.last.body, s.Bytes()), "the canonical bytes as they are")
		checked++
	}
	assert.Greater(t, checked, 2000, "most generated effects are checked")
}

// naiveVerify is a check written as many webhook receivers are: an HMAC
// over the timestamp and the body only, the idempotency key read from
// its header.
func naiveVerify(h http.Header, body []byte) (key string, ok bool) {
	sig := h.Get("X-Naive-Signature")
	return h.Get(httpexec.HeaderIdempotencyKey), sig == naiveSign(body)
}

func naiveSign(body []byte) string { return fmt.Sprintf("%x", append([]byte("mac:"), body...)) }

// TestAttackNewKeyOnACapturedRequest: whoever captures one request re-sends
// it with another idempotency key. A tool that dedupes on a key the
// signature does not bind runs the refund twice; Verify refuses the copy.
func TestAttackNewKeyOnACapturedRequest(t *testing.T) {
	r := captured(t)
	replay := r.header.Clone()
	replay.Set(httpexec.HeaderIdempotencyKey, "k-attacker")

	// The naive variant: the same body, so the same MAC, under a new key.
	naive := r.header.Clone()
	naive.Set("X-Naive-Signature", naiveSign(r.body))
	naiveReplay := replay.Clone()
	naiveReplay.Set("X-Naive-Signature", naiveSign(r.body))
	ran := map[string]bool{}
	for _, h := range []http.Header{naive, naiveReplay} {
		if k, ok := naiveVerify(h, r.body); ok {
			ran[k] = true
		}
	}
	assert.Len(t, ran, 2, "the naive tool runs the refund twice")

	_, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.NoError(t, err)
	_, err = httpexec.VerifyMessage(replay, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.ErrorIs(t, err, httpexec.ErrBadSignature, "the key is in the signed string")
}
