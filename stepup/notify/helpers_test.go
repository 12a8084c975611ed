package notify_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/notify"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	now    = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	window = 5 * time.Minute
)

const deliveryID = "0123456789abcdef0123456789abcdef"

func sampleNotice() notify.Notice {
	return notify.Notice{
		Ticket: "t_9QkVx2", Tool: "send_email", Class: "external", User: "user:lee",
		Approvers: []string{"user:lee", "user:kim"}, ExpiresAt: now.Add(15 * time.Minute),
		Link: "https://approve.example.com/t/t_9QkVx2",
	}
}

// encode is a delivery body, written independently of the package.
func encode(t testing.TB, id string, n notify.Notice) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"delivery": id, "ticket": n.Ticket, "tool": n.Tool, "class": n.Class, "user": n.User,
		"approvers": n.Approvers, "expires_at": n.ExpiresAt, "link": n.Link,
	})
	require.NoError(t, err)
	return b
}

// mac is HMAC-SHA256(key, "<ts>.<body>") in hex, as the package
// documentation specifies it.
func mac(key []byte, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func signedRequest(body []byte, ts int64) *http.Request {
	return request(body, "t="+strconv.FormatInt(ts, 10)+",v1="+mac(secret, ts, body))
}

func request(body []byte, sig string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig != "" {
		r.Header.Set(notify.HeaderSignature, sig)
	}
	return r
}
