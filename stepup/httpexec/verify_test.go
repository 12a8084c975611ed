package httpexec_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

// captured is one request an Executor signed at fixedNow.
func captured(t testing.TB) received {
	t.Helper()
	var got received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		got = received{header: r.Header.Clone(), body: b.Bytes()}
	}))
	defer srv.Close()
	e, err := httpexec.New("issue_refund", srv.URL, secret, &httpexec.Options{Now: clock})
	require.NoError(t, err)
	_, err = e.Execute(plug.WithTicket(t.Context(), "t_abc"), refund("19.99"), key)
	require.NoError(t, err)
	return got
}

// signed is header h with its signature replaced by one over body, as a
// holder of the secret would make it.
func signed(h http.Header, body []byte, at time.Time) http.Header {
	h = h.Clone()
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(httpexec.CanonicalString(at.Unix(), h.Get(httpexec.HeaderTool), h.Get(httpexec.HeaderIdempotencyKey), body)))
	h.Set(httpexec.HeaderSignature, "t="+strconv.FormatInt(at.Unix(), 10)+",v1="+hex.EncodeToString(m.Sum(nil)))
	return h
}

func TestVerifyRefusesEveryTamperedBodyByte(t *testing.T) {
	r := captured(t)
	_, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.NoError(t, err)
	for i := range r.body {
		for _, flip := range []byte{0x01, 0x20, 0x80} {
			body := bytes.Clone(r.body)
			body[i] ^= flip
			_, err := httpexec.VerifyMessage(r.header, body, "issue_refund", secret, time.Minute, fixedNow)
			require.ErrorIs(t, err, httpexec.ErrBadSignature, "byte %d ^ %#x", i, flip)
		}
	}
	for _, body := range [][]byte{r.body[:len(r.body)-1], append(bytes.Clone(r.body), ' '), {}} {
		_, err := httpexec.VerifyMessage(r.header, body, "issue_refund", secret, time.Minute, fixedNow)
		require.ErrorIs(t, err, httpexec.ErrBadSignature)
	}
}

func TestVerifyRefusesTamperedHeaders(t *testing.T) {
	r := captured(t)
	sig := r.header.Get(httpexec.HeaderSignature)
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	for _, tc := range []struct {
		name   string
		edit   func(h http.Header)
		secret []byte
		now    time.Time
		want   error
	}{
		{"another key", func(h http.Header) { h.Set(httpexec.HeaderIdempotencyKey, "k-approval-2") }, secret, fixedNow, httpexec.ErrBadSignature},
		{"another tool", func(h http.Header) { h.Set(httpexec.HeaderTool, "send_email") }, secret, fixedNow, httpexec.ErrBadSignature},
		{"another time", func(h http.Header) {
			h.Set(httpexec.HeaderSignature, strings.Replace(sig, ts, strconv.FormatInt(fixedNow.Unix()+1, 10), 1))
		}, secret, fixedNow, httpexec.ErrBadSignature},
		{"another secret", func(http.Header) {}, bytes.Repeat([]byte("t"), 32), fixedNow, httpexec.ErrBadSignature},
		{"stale", func(http.Header) {}, secret, fixedNow.Add(time.Minute + time.Second), httpexec.ErrStale},
		{"from the future", func(http.Header) {}, secret, fixedNow.Add(-time.Minute - time.Second), httpexec.ErrStale},
		{"short secret", func(http.Header) {}, secret[:31], fixedNow, httpexec.ErrSecret},
		{"no signature", func(h http.Header) { h.Del(httpexec.HeaderSignature) }, secret, fixedNow, httpexec.ErrMalformed},
		{"two signature headers", func(h http.Header) { h.Add(httpexec.HeaderSignature, sig) }, secret, fixedNow, httpexec.ErrMalformed},
		{"no key", func(h http.Header) { h.Del(httpexec.HeaderIdempotencyKey) }, secret, fixedNow, httpexec.ErrMalformed},
		{"two keys", func(h http.Header) { h.Add(httpexec.HeaderIdempotencyKey, key) }, secret, fixedNow, httpexec.ErrMalformed},
		{"a key with a line break", func(h http.Header) { h.Set(httpexec.HeaderIdempotencyKey, key+"\nx") }, secret, fixedNow, httpexec.ErrMalformed},
		{"no tool", func(h http.Header) { h.Del(httpexec.HeaderTool) }, secret, fixedNow, httpexec.ErrMalformed},
		{"no timestamp", func(h http.Header) { h.Set(httpexec.HeaderSignature, sig[strings.Index(sig, ",")+1:]) }, secret, fixedNow, httpexec.ErrMalformed},
		{"a short v1", func(h http.Header) { h.Set(httpexec.HeaderSignature, sig[:len(sig)-2]) }, secret, fixedNow, httpexec.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := r.header.Clone()
			tc.edit(h)
			_, err := httpexec.VerifyMessage(h, r.body, "issue_refund", tc.secret, time.Minute, tc.now)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// TestVerifyRefusesEverySignedHeaderTwice: a request as an Executor sends
// it, with a second value generated for one of its signed headers (the
// same value, another well-formed one, empty, or noise), before or after
// the first, is refused as malformed: a reader of the first value and a
// reader of the last must not see two requests.
func TestVerifyRefusesEverySignedHeaderTwice(t *testing.T) {
	r := captured(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, name := range []string{httpexec.HeaderSignature, httpexec.HeaderTool, httpexec.HeaderIdempotencyKey} {
		first := r.header.Get(name)
		seconds := []string{first, "", "send_email", "k-approval-2", " " + first}
		for range 50 {
			b := make([]byte, rng.IntN(80))
			for i := range b {
				b[i] = byte(0x20 + rng.IntN(0x5f))
			}
			seconds = append(seconds, string(b))
		}
		for _, second := range seconds {
			for _, before := range []bool{false, true} {
				h := r.header.Clone()
				if before {
					h[name] = []string{second, first}
				} else {
					h.Add(name, second)
				}
				_, err := httpexec.VerifyMessage(h, r.body, "issue_refund", secret, time.Minute, fixedNow)
				assert.ErrorIs(t, err, httpexec.ErrMalformed, "%s: %q", name, h.Values(name))
			}
		}
	}
}

func TestVerifyAcceptsARolledSecret(t *testing.T) {
	r := captured(t)
	h := r.header.Clone()
	other := strings.Repeat("ab", 32)
	h.Set(httpexec.HeaderSignature, strings.Replace(h.Get(httpexec.HeaderSignature), ",v1=", ",v1="+other+", x9=later ,v1=", 1))
	req, err := httpexec.VerifyMessage(h, r.body, "issue_refund", secret, time.Minute, fixedNow)
	require.NoError(t, err, "one of several v1 items matches; unknown keys are ignored")
	assert.Equal(t, fixedNow.UTC(), req.Sent)
}

// TestVerifyRefusesBodiesNoExecutorWrites signs bodies as a holder of the
// secret would: a sender's bug must not pass as an approved effect.
func TestVerifyRefusesBodiesNoExecutorWrites(t *testing.T) {
	r := captured(t)
	body := string(r.body)
	digest := body[len(`{"digest":"`) : len(`{"digest":"`)+64]
	eff := body[strings.Index(body, `"effect":`)+len(`"effect":`) : strings.LastIndex(body, `,"idempotency_key"`)]
	rest := body[strings.LastIndex(body, `,"idempotency_key"`):]
	for _, tc := range []struct{ name, body string }{
		{"members reordered", `{"effect":` + eff + `,"digest":"` + digest + `"` + rest},
		{"spaces", strings.Replace(body, `","effect":`, `", "effect":`, 1)},
		{"an unknown member", strings.TrimSuffix(body, "}") + `,"extra":1}`},
		{"a member in capitals", strings.Replace(body, `"ticket"`, `"TICKET"`, 1)},
		{"another digest", strings.Replace(body, digest, strings.Repeat("0", 64), 1)},
		{"a non-canonical effect", strings.Replace(body, `"amount":19.99`, `"amount":19.990`, 1)},
		{"another key in the body", strings.Replace(body, `"idempotency_key":"`+key, `"idempotency_key":"k-other`, 1)},
		{"another tool in the effect", strings.Replace(body, `"tool":"issue_refund"`, `"tool":"issue_refunds"`, 1)},
		{"not JSON", "refund 19.99"},
		{"two messages", body + body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEqual(t, body, tc.body, "the case changes the body")
			_, err := httpexec.VerifyMessage(signed(r.header, []byte(tc.body), fixedNow), []byte(tc.body), "issue_refund", secret, time.Minute, fixedNow)
			require.ErrorIs(t, err, httpexec.ErrMalformed)
		})
	}
}

func TestVerifyReadsABoundedBody(t *testing.T) {
	r := captured(t)
	big := bytes.Repeat([]byte(" "), httpexec.MaxRequestBytes+1)
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(big))
	req.Header = r.header
	_, err := httpexec.Verify(req, "issue_refund", secret, time.Minute, fixedNow)
	require.ErrorIs(t, err, httpexec.ErrTooLarge)
	get := httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(r.body))
	get.Header = r.header
	_, err = httpexec.Verify(get, "issue_refund", secret, time.Minute, fixedNow)
	require.ErrorIs(t, err, httpexec.ErrMalformed)
	post := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(r.body))
	post.Header = r.header
	got, err := httpexec.Verify(post, "issue_refund", secret, time.Minute, fixedNow)
	require.NoError(t, err)
	assert.Equal(t, "t_abc", got.Ticket)
}

func TestVerifyWindowMustBePositive(t *testing.T) {
	r := captured(t)
	_, err := httpexec.VerifyMessage(r.header, r.body, "issue_refund", secret, 0, fixedNow)
	require.Error(t, err)
}

func ExampleVerify() {
	secret := bytes.Repeat([]byte("s"), 32) // the tool's shared secret, 32 bytes or more
	seen := map[string][]byte{}             // idempotency key -> answer; a database table in a real tool
	tool := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := httpexec.Verify(r, "issue_refund", secret, httpexec.DefaultWindow, time.Now())
		if err != nil {
			http.Error(w, "refused", http.StatusUnauthorized)
			return
		}
		if answer, ok := seen[req.IdempotencyKey]; ok {
			_, _ = w.Write(answer) // the same effect again: not repeated
			return
		}
		answer := fmt.Appendf(nil, `{"refunded":%s}`, req.Effect.Args)
		seen[req.IdempotencyKey] = answer
		_, _ = w.Write(answer)
	})
	srv := httptest.NewServer(tool)
	defer srv.Close()

	exec, _ := httpexec.New("issue_refund", srv.URL, secret, nil)
	out, err := exec.Execute(context.Background(), refund("19.99"), "k-1")
	fmt.Println(string(out), err)
	out, err = exec.Execute(context.Background(), refund("19.99"), "k-1")
	fmt.Println(string(out), err, len(seen))
	// Output:
	// {"refunded":{"amount":19.99,"note":"<b>&amp; é ✓</b>","order":"A-17"}} <nil>
	// {"refunded":{"amount":19.99,"note":"<b>&amp; é ✓</b>","order":"A-17"}} <nil> 1
}

// Under one secret shared by all of a service's tools, the refunds
// handler names its tool: a request the gate signed for send_email, sent
// or replayed to it, is refused with ErrWrongTool and never run.
func ExampleVerify_anotherTool() {
	secret := bytes.Repeat([]byte("s"), 32) // shared by every tool of the service
	refunds := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := httpexec.Verify(r, "issue_refund", secret, httpexec.DefaultWindow, time.Now())
		switch {
		case errors.Is(err, httpexec.ErrWrongTool):
			http.Error(w, "refused: signed for another tool", http.StatusUnauthorized)
		case err != nil:
			http.Error(w, "refused", http.StatusUnauthorized)
		default:
			_, _ = w.Write([]byte(`{"refunded":true}`))
		}
	})
	srv := httptest.NewServer(refunds)
	defer srv.Close()

	email := refund("19.99")
	email.Tool = "send_email"
	exec, _ := httpexec.New("send_email", srv.URL, secret, &httpexec.Options{Retries: -1})
	_, err := exec.Execute(context.Background(), email, "k-1")
	fmt.Println(err)
	// Output:
	// httpexec: the tool failed: tool send_email: status 401 (final)
}
