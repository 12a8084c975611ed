package tooluse_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentstepup/asu/adapters/tooluse"
)

// FuzzRun sends whatever a model might write as a tool call through the
// gate: nothing panics, a call that needs a person never runs without
// one, and the text the model reads is never empty.
func FuzzRun(f *testing.F) {
	f.Add("send_email", `{"to":"finance@example.com","subject":"Q3"}`)
	f.Add("send_email", `{"to":"a@example.com","to":"b@evil.example"}`)
	f.Add("issue_refund", `{"order":"A-17","amount":1e400}`)
	f.Add("write_draft", `{"x":0.30000000000000001}`)
	f.Add("read_file", `[1,2]`)
	f.Add("", ``)
	f.Add("send_email\u200b", `{"to":"\ud800"}`)
	h, _ := world(f)
	g := tooluse.New(h.Gate, &tooluse.Options{Wait: time.Millisecond})
	f.Fuzz(func(t *testing.T, name, args string) {
		o := g.Run(context.Background(), scope(), tooluse.Request{ID: "c", Name: name, Args: json.RawMessage(args)})
		if o.Text() == "" {
			t.Fatal("empty tool result")
		}
		if o.State == tooluse.Ran && (name == "send_email" || name == "issue_refund") {
			t.Fatalf("%s ran without a person", name)
		}
		if o.State != tooluse.Ran && strings.HasPrefix(o.Text(), "{") {
			t.Fatalf("a call that did not run reads like output: %q", o.Text())
		}
	})
}
