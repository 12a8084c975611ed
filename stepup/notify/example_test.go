package notify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/agentstepup/asu/stepup/notify"
)

// The gate's side: a Webhook posting to the chat bridge, and the bridge's
// side verifying each delivery with a replay guard.
func ExampleWebhook() {
	shared := []byte("a secret of at least 32 bytes...") // from the secret store, on both sides

	guard := notify.NewReplayGuard(10000)
	got := make(chan notify.Notice, 1)
	bridge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := guard.Verify(r, shared, 5*time.Minute, time.Now())
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got <- d.Notice
	}))
	defer bridge.Close()

	hook, err := notify.NewWebhook(bridge.URL, shared, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = hook.Notify(context.Background(), notify.Notice{
		Ticket: "t_9QkVx2", Tool: "send_email", Class: "external", User: "user:lee",
		Approvers: []string{"user:lee"}, ExpiresAt: time.Now().Add(15 * time.Minute),
		Link: "https://approve.example.com/t/t_9QkVx2",
	})
	fmt.Println("queued:", err == nil)
	n := <-got
	fmt.Println(n.Tool, n.Class, "for", n.User, "->", n.Link)
	fmt.Println("closed:", hook.Close(context.Background()))
	// Output:
	// queued: true
	// send_email external for user:lee -> https://approve.example.com/t/t_9QkVx2
	// closed: <nil>
}

func ExampleVerify() {
	shared := []byte("a secret of at least 32 bytes...")
	at := time.Unix(1777629600, 0)
	body := `{"delivery":"0123456789abcdef0123456789abcdef","ticket":"t_1","tool":"send_email",` +
		`"class":"external","user":"user:lee","approvers":["user:lee"],` +
		`"expires_at":"2026-05-01T10:15:00Z","link":"https://approve.example.com/t/t_1"}`
	sig := "t=1777629600,v1=" + mac(shared, at.Unix(), []byte(body)) // what the sender computes

	r := request([]byte(body), sig)
	d, err := notify.Verify(r, shared, 5*time.Minute, at.Add(time.Minute))
	fmt.Println(d.ID, d.Notice.Ticket, err)

	_, err = notify.Verify(request([]byte(body), sig), shared, 5*time.Minute, at.Add(time.Hour))
	fmt.Println(errors.Is(err, notify.ErrStale))
	// Output:
	// 0123456789abcdef0123456789abcdef t_1 <nil>
	// true
}

func ExampleReplayGuard() {
	shared := []byte("a secret of at least 32 bytes...")
	at := time.Unix(1777629600, 0)
	body := []byte(`{"delivery":"0123456789abcdef0123456789abcdef","ticket":"t_1","link":"https://approve.example.com/t/t_1"}`)
	sig := "t=1777629600,v1=" + mac(shared, at.Unix(), body)

	guard := notify.NewReplayGuard(10000)
	_, err := guard.Verify(request(body, sig), shared, 5*time.Minute, at)
	fmt.Println(err)
	_, err = guard.Verify(request(body, sig), shared, 5*time.Minute, at) // captured and sent again
	fmt.Println(err)
	// Output:
	// <nil>
	// notify: delivery already received
}
