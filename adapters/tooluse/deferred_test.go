package tooluse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/stepup"
)

func q3(id string) tooluse.Request {
	return tooluse.Request{ID: id, Name: "send_email", Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`)}
}

// TestDeferredAnswersTheOriginalCall: a call that waits is kept as a
// Deferred (which survives JSON), approved, and resumed once: the outcome
// names the original call id, the call ran once, and resuming again
// answers that the approval is spent without running it again.
func TestDeferredAnswersTheOriginalCall(t *testing.T) {
	w := adaptertest.NewWorld(t)
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()

	o := g.Run(ctx, adaptertest.Scope(), q3("call_1"))
	require.Equal(t, tooluse.Pending, o.State)
	d, ok := o.Deferred()
	require.True(t, ok)
	assert.Equal(t, tooluse.Deferred{CallID: "call_1", Tool: "send_email", Ticket: o.Ticket.ID}, d)
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	var parked tooluse.Deferred
	require.NoError(t, json.Unmarshal(raw, &parked))

	still := g.ResumeDeferred(ctx, parked)
	assert.Equal(t, tooluse.Pending, still.State, "not decided yet")
	assert.Equal(t, "call_1", still.CallID)
	assert.Zero(t, w.Rec.Count())

	_, err = w.Approve(d.Ticket)
	require.NoError(t, err)
	done := g.ResumeDeferred(ctx, parked)
	assert.Equal(t, tooluse.Ran, done.State, done.Text())
	assert.Equal(t, "call_1", done.CallID)
	assert.Equal(t, "send_email", done.Tool)
	assert.Equal(t, 1, w.Rec.Count())

	again := g.ResumeDeferred(ctx, parked)
	assert.Equal(t, tooluse.Spent, again.State)
	assert.Equal(t, 1, w.Rec.Count())

	_, ok = done.Deferred()
	assert.False(t, ok, "only a pending outcome is deferred")
}

// TestRetryJoinsTheWaitingTicket: a model that writes the same call again
// under new call ids, in any JSON spelling, joins the ticket it has
// instead of proposing new ones; a call that differs in anything the gate
// stores gets a ticket of its own; after the approval the call runs once,
// whichever call id resumes it, and a retry after that is a new request.
func TestRetryJoinsTheWaitingTicket(t *testing.T) {
	w := adaptertest.NewWorld(t)
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	s := adaptertest.Scope()

	first := g.Run(ctx, s, q3("call_1"))
	require.Equal(t, tooluse.Pending, first.State)
	spellings := []string{
		`{"to":"finance@example.com","subject":"Q3"}`,
		`{"subject":"Q3","to":"finance@example.com"}`,
		" {\n\t\"to\" : \"finance@example.com\", \"subject\":\"Q3\" }\n",
		`{"to":"finance\u0040example.com","subject":"\u0051\u0033"}`,
	}
	for i, sp := range spellings {
		for _, run := range []bool{true, false} {
			r := tooluse.Request{ID: fmt.Sprintf("retry_%d_%v", i, run), Name: "send_email", Args: json.RawMessage(sp)}
			var o tooluse.Outcome
			if run {
				o = g.Run(ctx, s, r)
			} else {
				o = g.Propose(ctx, s, r)
			}
			assert.Equal(t, tooluse.Pending, o.State, sp)
			assert.True(t, o.Joined, sp)
			assert.Equal(t, first.Ticket.ID, o.Ticket.ID, "%s joins the waiting ticket", sp)
			assert.Equal(t, r.ID, o.CallID, "answered under the retry's own id")
		}
	}

	others := map[string]func(*tooluse.Scope, *tooluse.Request){
		"other recipient": func(_ *tooluse.Scope, r *tooluse.Request) {
			r.Args = json.RawMessage(`{"to":"attacker@evil.example","subject":"Q3"}`)
		},
		"extra argument": func(_ *tooluse.Scope, r *tooluse.Request) {
			r.Args = json.RawMessage(`{"to":"finance@example.com","subject":"Q3","body":"x"}`)
		},
		"other session":   func(s *tooluse.Scope, _ *tooluse.Request) { s.Session = "sess-2" },
		"other task":      func(s *tooluse.Scope, _ *tooluse.Request) { s.Task = "t-43" },
		"new provenance":  func(s *tooluse.Scope, _ *tooluse.Request) { s.Taint = append(s.Taint, "read mail") },
		"other rationale": func(s *tooluse.Scope, _ *tooluse.Request) { s.Rationale = "urgent" },
		"other agent":     func(s *tooluse.Scope, _ *tooluse.Request) { s.Principal.Agent = "agent:billing" },
		"a delegation":    func(s *tooluse.Scope, _ *tooluse.Request) { s.Principal.Delegations = []string{"agent:planner"} },
	}
	for name, vary := range others {
		sc, r := adaptertest.Scope(), q3("other_"+strings.ReplaceAll(name, " ", "_"))
		vary(&sc, &r)
		o := g.Propose(ctx, sc, r)
		assert.False(t, o.Joined, name)
		assert.NotEqual(t, first.Ticket.ID, o.Ticket.ID, "%s is not joined", name)
	}

	_, err := w.Approve(first.Ticket.ID)
	require.NoError(t, err)
	joined := g.Run(ctx, s, q3("retry_after_approval"))
	assert.Equal(t, tooluse.Ran, joined.State, joined.Text())
	assert.True(t, joined.Joined)
	assert.Equal(t, 1, w.Rec.Count())
	d, _ := first.Deferred()
	assert.Equal(t, tooluse.Spent, g.ResumeDeferred(ctx, d).State, "the original call is told the approval was used")

	fresh := g.Run(ctx, s, q3("retry_after_run"))
	assert.False(t, fresh.Joined, "a spent ticket is not joined")
	assert.Equal(t, tooluse.Pending, fresh.State, "the same call again needs a new approval")
	assert.NotEqual(t, first.Ticket.ID, fresh.Ticket.ID)
	assert.Equal(t, 1, w.Rec.Count())
}

// TestRetryOfADeniedCallIsANewRequest: once a person denied a call, a
// retry does not join the denied ticket (it would answer "denied" without
// the gate's say): it is proposed again and the gate decides it anew.
func TestRetryOfADeniedCallIsANewRequest(t *testing.T) {
	w := adaptertest.NewWorld(t)
	g := tooluse.New(w.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()
	first := g.Run(ctx, adaptertest.Scope(), q3("call_1"))
	require.Equal(t, tooluse.Pending, first.State)
	_, err := w.Deny(first.Ticket.ID, "not what I asked for")
	require.NoError(t, err)
	again := g.Run(ctx, adaptertest.Scope(), q3("call_2"))
	assert.False(t, again.Joined)
	assert.NotEqual(t, first.Ticket.ID, again.Ticket.ID)
	assert.Zero(t, w.Rec.Count())
}

// TestRefusalTextIsOneSentence: a person's or a model's denial reads as
// one sentence, never "denied: denied by", and without the hashes the
// audit record keeps.
func TestRefusalTextIsOneSentence(t *testing.T) {
	hex := strings.Repeat("0a", 32)
	for reason, want := range map[string]string{
		"denied by user:dana: not what I asked for": "Not run: denied by user:dana: not what I asked for.",
		"denied by user:dana":                       "Not run: denied by user:dana.",
		"denied by model:screener (prompt sha256 " + hex + ", answer sha256 " + hex + "): sends money": "Not run: denied by model:screener: sends money.",
		"denied by model:screener (prompt sha256 " + hex + ", answer sha256 " + hex + ")":              "Not run: denied by model:screener.",
		"unknown tool": "Not run: denied: unknown tool.",
		"":             "Not run: denied.",
		"Denied after 5 denials in a row.\nTry later": "Not run: Denied after 5 denials in a row. Try later.",
	} {
		o := tooluse.Outcome{State: tooluse.Denied, Ticket: stepup.Ticket{Status: stepup.StatusDenied, Reason: reason}}
		assert.Equal(t, want, o.Text(), reason)
		assert.NotContains(t, o.Text(), "denied: denied")
		assert.NotContains(t, o.Text(), "sha256")
	}
}

// ExampleGate_ResumeDeferred is the deferred flow a host runs: a call
// that waits is kept as a Deferred (in its own store, as JSON) instead of
// answering the model "waits"; a retry of the same call under a new id
// joins the ticket; once the person approved, the original call id gets
// the one answer, and the call ran once.
func ExampleGate_ResumeDeferred() {
	ctx := context.Background()
	ex, err := adaptertest.NewExample() // the gate, and the user's passkey on her device
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ex.Close()
	g := tooluse.New(ex.Gate, &tooluse.Options{Wait: 100 * time.Millisecond})

	o := g.Run(ctx, adaptertest.Scope(), q3("call_1"))
	d, _ := o.Deferred()
	parked, _ := json.Marshal(d)
	fmt.Println(o.State, string(parked) != "")

	retry := g.Run(ctx, adaptertest.Scope(), q3("call_2")) // the model asks again
	fmt.Println("retry joins:", retry.Joined, retry.Ticket.ID == d.Ticket)

	_ = ex.Approve(ctx, d.Ticket) // the person, out of band
	var back tooluse.Deferred
	_ = json.Unmarshal(parked, &back)
	done := g.ResumeDeferred(ctx, back)
	fmt.Println(done.CallID, done.State, done.Text(), ex.Sent.Count())
	// Output:
	// pending true
	// retry joins: true true
	// call_1 ran {"sent":true} 1
}
