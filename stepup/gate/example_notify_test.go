package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

func ExampleWithNotifier() {
	secret := []byte("a webhook secret of thirty-two bytes or more")
	// The approvers' chat bridge receives signed notices and checks them.
	heard := make(chan notify.Notice, 1)
	bridge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := notify.Verify(r, secret, 5*time.Minute, time.Now())
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		heard <- d.Notice
	}))
	defer bridge.Close()
	hook, err := notify.NewWebhook(bridge.URL, secret, nil)
	if err != nil {
		panic(err)
	}
	defer hook.Close(context.Background())

	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithNotifier(hook, func(id stepup.TicketID) string {
			return gateway.ApprovalLink("https://approve.example.com", id)
		}))
	if err != nil {
		panic(err)
	}
	_, err = g.Propose(context.Background(), stepup.Call{Tool: "send_email",
		Args:    json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	if err != nil {
		panic(err)
	}
	n := <-heard
	fmt.Println(n.Tool, n.Class, n.User, n.Approvers)
	// Output: send_email external user:dana [user:dana]
}
