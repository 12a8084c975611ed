package notify_test

import (
	"bytes"
	"encoding/json"
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

	"github.com/agentstepup/asu/stepup/notify"
)

func TestVerifyAccepts(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	r := signedRequest(body, now.Unix())
	r.Header.Set(notify.HeaderDelivery, deliveryID)
	d, err := notify.Verify(r, secret, window, now)
	require.NoError(t, err)
	assert.Equal(t, deliveryID, d.ID)
	assert.Equal(t, now, d.Sent)
	assert.Equal(t, sampleNotice(), d.Notice)
}

func TestVerifyRefuses(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	ts := now.Unix()
	good := "t=" + strconv.FormatInt(ts, 10) + ",v1=" + mac(secret, ts, body)
	other := []byte("another secret, 32 bytes or more")
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want error
	}{
		{"tampered body", func() *http.Request {
			return request(bytes.Replace(body, []byte("user:kim"), []byte("user:eve"), 1), good)
		}, notify.ErrBadSignature},
		{"tampered timestamp", func() *http.Request {
			return request(body, "t="+strconv.FormatInt(ts+1, 10)+",v1="+mac(secret, ts, body))
		}, notify.ErrBadSignature},
		{"tampered signature", func() *http.Request {
			s := []byte(good)
			s[len(s)-1] ^= 1
			return request(body, string(s))
		}, notify.ErrBadSignature},
		{"wrong secret", func() *http.Request {
			return request(body, "t="+strconv.FormatInt(ts, 10)+",v1="+mac(other, ts, body))
		}, notify.ErrBadSignature},
		{"old timestamp", func() *http.Request {
			old := now.Add(-window - time.Second).Unix()
			return signedRequest(body, old)
		}, notify.ErrStale},
		{"future timestamp", func() *http.Request {
			return signedRequest(body, now.Add(window+time.Second).Unix())
		}, notify.ErrStale},
		{"no signature", func() *http.Request { return request(body, "") }, notify.ErrMalformed},
		{"two signature headers", func() *http.Request {
			r := request(body, good)
			r.Header.Add(notify.HeaderSignature, good)
			return r
		}, notify.ErrMalformed},
		{"GET", func() *http.Request {
			r := request(body, good)
			r.Method = http.MethodGet
			return r
		}, notify.ErrMalformed},
		{"delivery header disagrees", func() *http.Request {
			r := request(body, good)
			r.Header.Set(notify.HeaderDelivery, strings.Repeat("f", 32))
			return r
		}, notify.ErrMalformed},
		{"signed garbage", func() *http.Request { return signedRequest([]byte(`[1,2]`), ts) }, notify.ErrMalformed},
		{"signed trailing data", func() *http.Request { return signedRequest(append(bytes.Clone(body), '{'), ts) }, notify.ErrMalformed},
		{"bad delivery id", func() *http.Request {
			return signedRequest(encode(t, "../../etc", sampleNotice()), ts)
		}, notify.ErrMalformed},
		{"invalid notice", func() *http.Request {
			n := sampleNotice()
			n.Link = "javascript:alert(1)"
			return signedRequest(encode(t, deliveryID, n), ts)
		}, notify.ErrMalformed},
		{"too large", func() *http.Request {
			n := sampleNotice()
			n.Tool = strings.Repeat("x", notify.MaxBodyBytes)
			return signedRequest(encode(t, deliveryID, n), ts)
		}, notify.ErrTooLarge},
		{"too large, length unknown", func() *http.Request {
			n := sampleNotice()
			n.Tool = strings.Repeat("x", notify.MaxBodyBytes)
			r := signedRequest(encode(t, deliveryID, n), ts)
			r.ContentLength = -1
			return r
		}, notify.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := notify.Verify(tc.req(), secret, window, now)
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestVerifyEdgeOfWindow(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	for _, ts := range []time.Time{now.Add(-window), now.Add(window)} {
		_, err := notify.Verify(signedRequest(body, ts.Unix()), secret, window, now)
		assert.NoError(t, err)
	}
}

func TestVerifyWeakSecret(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	short := secret[:notify.MinSecretBytes-1]
	r := request(body, "t="+strconv.FormatInt(now.Unix(), 10)+",v1="+mac(short, now.Unix(), body))
	_, err := notify.Verify(r, short, window, now)
	assert.ErrorIs(t, err, notify.ErrSecret)
}

// TestVerifyRotation: a sender rolling its secret signs with both; a
// receiver holding either accepts.
func TestVerifyRotation(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	next := []byte("the next secret, also 32 bytes..")
	ts := now.Unix()
	h := fmt.Sprintf("t=%d,v1=%s,v1=%s", ts, mac(secret, ts, body), mac(next, ts, body))
	for _, key := range [][]byte{secret, next} {
		_, err := notify.Verify(request(body, h), key, window, now)
		assert.NoError(t, err)
	}
}

func TestReplayGuard(t *testing.T) {
	g := notify.NewReplayGuard(2)
	body := encode(t, deliveryID, sampleNotice())
	_, err := g.Verify(signedRequest(body, now.Unix()), secret, window, now)
	require.NoError(t, err)

	_, err = g.Verify(signedRequest(body, now.Unix()), secret, window, now.Add(time.Minute))
	assert.ErrorIs(t, err, notify.ErrReplayed, "the same request again")
	_, err = g.Verify(signedRequest(body, now.Add(time.Minute).Unix()), secret, window, now.Add(time.Minute))
	assert.ErrorIs(t, err, notify.ErrReplayed, "a later attempt of the same delivery")

	// The later attempt keeps the id until it too leaves the window.
	_, err = g.Verify(signedRequest(body, now.Add(time.Minute).Unix()), secret, window, now.Add(window+30*time.Second))
	assert.ErrorIs(t, err, notify.ErrReplayed)

	// A tampered replay is refused for its signature, and does not touch
	// the guard.
	_, err = g.Verify(request(body, "t=1,v1="+strings.Repeat("0", 64)), secret, window, now)
	assert.ErrorIs(t, err, notify.ErrStale)
	assert.Equal(t, 1, g.Len())
}

func TestReplayGuardBounded(t *testing.T) {
	g := notify.NewReplayGuard(3)
	id := func(i int) string { return fmt.Sprintf("%032x", i) }
	for i := range 3 {
		_, err := g.Verify(signedRequest(encode(t, id(i), sampleNotice()), now.Unix()), secret, window, now)
		require.NoError(t, err)
	}
	_, err := g.Verify(signedRequest(encode(t, id(3), sampleNotice()), now.Unix()), secret, window, now)
	assert.ErrorIs(t, err, notify.ErrGuardFull, "full of unexpired ids: refuse, never forget one")
	assert.Equal(t, 3, g.Len())

	later := now.Add(window + time.Second)
	_, err = g.Verify(signedRequest(encode(t, id(3), sampleNotice()), later.Unix()), secret, window, later)
	require.NoError(t, err, "expired ids make room")
	assert.Equal(t, 1, g.Len())
}

// TestTamperProperty: for generated notices, the signed request verifies,
// and changing any one byte of the body, of the timestamp or of the
// signature makes it fail.
func TestTamperProperty(t *testing.T) {
	pool := []rune("abcXYZ019 :/._-\"\\<>&éж€😀\u2028")
	str := func(r *rand.Rand, n int) string {
		var b strings.Builder
		for range r.IntN(n) + 1 {
			b.WriteRune(pool[r.IntN(len(pool))])
		}
		return b.String()
	}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x40))
		n := notify.Notice{
			Ticket: str(r, 30), Tool: str(r, 20), Class: str(r, 10), User: str(r, 20),
			ExpiresAt: now.Add(time.Duration(r.IntN(1e6)) * time.Second),
			Link:      "https://approve.example.com/t/" + fmt.Sprint(r.Uint64()),
		}
		for range r.IntN(4) {
			n.Approvers = append(n.Approvers, str(r, 20))
		}
		body := encode(t, fmt.Sprintf("%032x", r.Uint64()), n)
		ts := now.Add(time.Duration(r.IntN(540)-270) * time.Second).Unix()
		d, err := notify.Verify(signedRequest(body, ts), secret, window, now)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, n, d.Notice, "seed %d", seed)

		sig := mac(secret, ts, body)
		i := r.IntN(len(body))
		bad := bytes.Clone(body)
		bad[i] ^= byte(1 + r.IntN(255))
		_, err = notify.Verify(request(bad, "t="+strconv.FormatInt(ts, 10)+",v1="+sig), secret, window, now)
		assert.Error(t, err, "seed %d: body byte %d", seed, i)

		_, err = notify.Verify(request(body, "t="+strconv.FormatInt(ts+int64(1+r.IntN(30)), 10)+",v1="+sig), secret, window, now)
		assert.ErrorIs(t, err, notify.ErrBadSignature, "seed %d: timestamp", seed)

		j := r.IntN(len(sig))
		badSig := []byte(sig)
		badSig[j] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", sig[j])+1+r.IntN(15))%16]
		_, err = notify.Verify(request(body, "t="+strconv.FormatInt(ts, 10)+",v1="+string(badSig)), secret, window, now)
		assert.ErrorIs(t, err, notify.ErrBadSignature, "seed %d: signature digit %d", seed, j)
	}
}

// FuzzVerify feeds arbitrary signature headers and bodies, the bodies
// correctly signed half of the time: Verify never panics, and what it
// accepts is a valid Notice that re-encodes within the size bound.
func FuzzVerify(f *testing.F) {
	f.Add("t=1777629600,v1="+strings.Repeat("0", 64), []byte(`{}`), false)
	f.Add("", encode(f, deliveryID, sampleNotice()), true)
	f.Add("", []byte(`{"delivery":"`+deliveryID+`","ticket":"x","link":"http://a"}`), true)
	f.Add("", []byte(`{"delivery":"`+deliveryID+`","ticket":"x","link":"http://a","approvers":null,"expires_at":"0001-01-01T00:00:00Z"}`), true)
	f.Fuzz(func(t *testing.T, header string, body []byte, signIt bool) {
		if signIt {
			header = "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + mac(secret, now.Unix(), body)
		}
		r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
		r.Header.Set(notify.HeaderSignature, header)
		d, err := notify.Verify(r, secret, window, now)
		if err != nil {
			return
		}
		if !signIt {
			t.Fatalf("accepted a body nobody signed")
		}
		if err := d.Notice.Validate(); err != nil {
			t.Fatalf("accepted an invalid notice: %v", err)
		}
		if _, err := json.Marshal(d.Notice); err != nil {
			t.Fatalf("accepted notice does not encode: %v", err)
		}
	})
}

// TestReplayGuardHoldsToTheWindowsEdge: at every moment a captured
// delivery still verifies (up to exactly the window's age), the guard
// still knows its id, whatever the clock's granularity.
func TestReplayGuardHoldsToTheWindowsEdge(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	for _, at := range []time.Duration{time.Nanosecond, time.Second, window - time.Second, window - time.Nanosecond, window} {
		g := notify.NewReplayGuard(16)
		_, err := g.Verify(signedRequest(body, now.Unix()), secret, window, now)
		require.NoError(t, err)
		_, err = g.Verify(signedRequest(body, now.Unix()), secret, window, now.Add(at))
		assert.ErrorIs(t, err, notify.ErrReplayed, "replayed %v later", at)
	}
}

// TestVerifyRefusesEverySignedHeaderTwice: a delivery as a Webhook sends
// it, with a second value generated for one of its signed headers (the
// same value, another well-formed one, empty, or noise), before or after
// the first, is refused as malformed.
func TestVerifyRefusesEverySignedHeaderTwice(t *testing.T) {
	body := encode(t, deliveryID, sampleNotice())
	genuine := func() *http.Request {
		r := signedRequest(body, now.Unix())
		r.Header.Set(notify.HeaderDelivery, deliveryID)
		return r
	}
	_, err := notify.Verify(genuine(), secret, window, now)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(9, 10))
	for _, name := range []string{notify.HeaderSignature, notify.HeaderDelivery} {
		first := genuine().Header.Get(name)
		seconds := []string{first, "", strings.Repeat("0", 32), " " + first}
		for range 50 {
			b := make([]byte, rng.IntN(80))
			for i := range b {
				b[i] = byte(0x20 + rng.IntN(0x5f))
			}
			seconds = append(seconds, string(b))
		}
		for _, second := range seconds {
			for _, before := range []bool{false, true} {
				r := genuine()
				if before {
					r.Header[name] = []string{second, first}
				} else {
					r.Header.Add(name, second)
				}
				_, err := notify.Verify(r, secret, window, now)
				assert.ErrorIs(t, err, notify.ErrMalformed, "%s: %q", name, r.Header.Values(name))
			}
		}
	}
}
