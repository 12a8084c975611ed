package attackkit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// naiveLoop is the approval loop the audit found in deployed runtimes: it
// asks "approve? y/n" in the chat the agent also writes to, shows the
// agent's own description of the call, keeps the call in its mutable
// state and runs whatever that state holds once approved, as often as it
// is resumed, and asks as often as the agent likes.
type naiveLoop struct {
	tools *attackkit.Tools

	// once and merge are the defences a variant of the loop has: runs
	// an approval once; merges a request into a waiting one with the same
	// tool and arguments, keeping the waiting one's provenance.
	once, merge bool

	mu       sync.Mutex
	n        int
	calls    map[stepup.TicketID]stepup.Call
	approved map[stepup.TicketID]bool
	ran      map[stepup.TicketID]bool
	hooks    []func(*stepup.Call)
	grants   map[string]string // grant id: the tool it lets run
	now      time.Time         // a clock nothing reads
}

func newNaive(tools *attackkit.Tools) *naiveLoop {
	return &naiveLoop{tools: tools, calls: map[stepup.TicketID]stepup.Call{},
		approved: map[stepup.TicketID]bool{}, ran: map[stepup.TicketID]bool{}, grants: map[string]string{}}
}

func (l *naiveLoop) Propose(_ context.Context, c stepup.Call) (stepup.Ticket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.merge {
		for id, w := range l.calls {
			if !l.approved[id] && w.Tool == c.Tool && string(w.Args) == string(c.Args) {
				return stepup.Ticket{ID: id, Status: stepup.StatusPending, Tool: c.Tool}, nil
			}
		}
	}
	l.n++
	id := stepup.TicketID(fmt.Sprintf("call-%d", l.n))
	l.calls[id] = c
	if c.Grant != "" && l.grants[c.Grant] == c.Tool {
		l.approved[id] = true // "refunds are fine"
		return stepup.Ticket{ID: id, Status: stepup.StatusApproved, Tool: c.Tool}, nil
	}
	return stepup.Ticket{ID: id, Status: stepup.StatusPending, Tool: c.Tool}, nil
}

func (l *naiveLoop) Wait(_ context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := stepup.StatusPending
	if l.approved[id] {
		st = stepup.StatusApproved
	}
	return stepup.Ticket{ID: id, Status: st}, nil
}

func (l *naiveLoop) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	l.mu.Lock()
	call, ok := l.calls[id]
	if !ok || !l.approved[id] {
		l.mu.Unlock()
		return stepup.Result{}, stepup.ErrNotApproved
	}
	if l.once && l.ran[id] {
		l.mu.Unlock()
		return stepup.Result{}, stepup.ErrConsumed
	}
	l.ran[id] = true
	for _, h := range l.hooks {
		h(&call)
	}
	l.mu.Unlock()
	out, err := l.tools.Execute(ctx, canon.Effect{Tool: call.Tool, Args: call.Args}, "")
	return stepup.Result{Ticket: id, Output: out}, err
}

// say is the chat: whoever types yes there approves.
func (l *naiveLoop) say(_ context.Context, id stepup.TicketID, text string) error {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "y", "yes", "approve", "approved", "ok":
		l.mu.Lock()
		l.approved[id] = true
		l.mu.Unlock()
	}
	return nil
}

func (l *naiveLoop) Approve(ctx context.Context, id stepup.TicketID, _ string) error {
	return l.say(ctx, id, "y")
}

func (l *naiveLoop) Deny(ctx context.Context, id stepup.TicketID, _ string) error {
	return l.say(ctx, id, "n")
}

// View is the prompt: the agent's description of what it wants to do.
func (l *naiveLoop) View(_ context.Context, id stepup.TicketID) (attackkit.Card, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls[id]
	return attackkit.Card{Trusted: "The assistant wants to: " + c.Rationale +
		"\nafter: " + strings.Join(c.Taint, ", ") + "\nApprove? y/n"}, nil
}

// Replay types the same "y" for another prompt: it is the same answer.
func (l *naiveLoop) Replay(ctx context.Context, _, to stepup.TicketID) error {
	return l.say(ctx, to, "y")
}

// Revoke notes the revocation; the loop never reads the note.
func (l *naiveLoop) Revoke(context.Context, stepup.TicketID, string) error { return nil }

// Grant lets the tool run without asking.
func (l *naiveLoop) Grant(_ context.Context, _ string, g grant.Grant, _ int, _ time.Duration) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := fmt.Sprintf("grant-%d", len(l.grants)+1)
	if g.Template != nil {
		l.grants[id] = g.Template.Tool
	}
	return id, nil
}

func (l *naiveLoop) advance(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = l.now.Add(d)
}

func (l *naiveLoop) edit(_ context.Context, id stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls[id]
	edit(&c)
	l.calls[id] = c
	return nil
}

func (l *naiveLoop) hook(_ context.Context, _ stepup.TicketID, edit func(*stepup.Call)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, edit)
	return nil
}

func (l *naiveLoop) resubmit(ctx context.Context, id stepup.TicketID, c stepup.Call) (stepup.Result, error) {
	l.mu.Lock()
	l.calls[id] = c
	l.mu.Unlock()
	return l.Execute(ctx, id)
}

func naive(_ testing.TB, tools *attackkit.Tools) attackkit.Target {
	l := newNaive(tools)
	return attackkit.Target{Runtime: l, People: l, Say: l.say,
		Checkpoint: l.edit, Hook: l.hook, History: l.edit, Resubmit: l.resubmit, Advance: l.advance}
}

// TestNaiveLoopBreaks shows the kit bites: the naive loop breaks
// substitution by every path, replay and flood control, and the kit says
// so.
func TestNaiveLoopBreaks(t *testing.T) {
	rep := attackkit.Assess(t, naive)
	t.Log("the naive loop:\n" + rep.String())
	for _, name := range []string{
		"in-channel reply yes",
		"requester approves its own call",
		"substitution by a resumer",
		"substitution by a hook",
		"substitution by an edited history",
		"substitution by resubmitted arguments",
		"replay of an executed approval",
		"replay of an approver's answer",
		"expired approval",
		"revoked approval",
		"agent-narrated card",
		"distinct effects render alike",
		"flood of one session",
		"flood across sessions",
		"denials without lockout",
		"duplicate merge drops provenance",
		"grant widening",
	} {
		r, ok := rep.Result(name)
		require.True(t, ok, name)
		assert.Equal(t, attackkit.Broken, r.Outcome, "%s: %s", name, r.Detail)
		assert.NotEmpty(t, r.Detail, name)
	}
	for _, p := range []attackkit.Property{attackkit.P1, attackkit.P2, attackkit.P3, attackkit.P4, attackkit.P6, attackkit.P7} {
		assert.Equal(t, attackkit.Broken, rep.Outcome(p), p.String())
	}
	// The loop keeps no record: that attack is skipped, not passed.
	r, ok := rep.Result("record forged or altered")
	require.True(t, ok)
	assert.Equal(t, attackkit.Skipped, r.Outcome)
	assert.Equal(t, attackkit.Skipped, rep.Outcome(attackkit.P5))
	assert.Contains(t, rep.String(), "P2 effect binding            broken")
}

// TestMergingLoopDropsProvenance shows the kit catches one defect alone: a
// loop that runs an approval once but merges a request carrying new
// provenance into one without it breaks merging, and not replay.
func TestMergingLoopDropsProvenance(t *testing.T) {
	rep := attackkit.Assess(t, func(_ testing.TB, tools *attackkit.Tools) attackkit.Target {
		l := newNaive(tools)
		l.once, l.merge = true, true
		return attackkit.Target{Runtime: l, People: l}
	})
	r, ok := rep.Result("duplicate merge drops provenance")
	require.True(t, ok)
	assert.Equal(t, attackkit.Broken, r.Outcome)
	assert.Contains(t, r.Detail, "a duplicate after read web page https://example.org/offer was merged and the card does not show it")
	assert.NotContains(t, r.Detail, "an identical duplicate", "merging identical requests is fine")
	assert.NotContains(t, r.Detail, "times", "one approval still ran once")
	r, ok = rep.Result("replay of an executed approval")
	require.True(t, ok)
	assert.Equal(t, attackkit.Held, r.Outcome, r.Detail)
}

// TestRunFailsTheNaiveLoop runs Run itself against the naive loop, in a
// child process, and requires the subtests of the broken properties to
// fail there under their names.
func TestRunFailsTheNaiveLoop(t *testing.T) {
	if os.Getenv("ATTACKKIT_RUN_NAIVE") == "1" {
		attackkit.Run(t, naive)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFailsTheNaiveLoop$", "-test.v")
	cmd.Env = append(os.Environ(), "ATTACKKIT_RUN_NAIVE=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "Run passed a loop that breaks P2, P3 and P7:\n%s", out)
	for _, name := range []string{
		"P2_effect_binding/substitution_by_a_resumer",
		"P2_effect_binding/substitution_by_a_hook",
		"P2_effect_binding/substitution_by_an_edited_history",
		"P2_effect_binding/substitution_by_resubmitted_arguments",
		"P3_freshness_and_single_use/replay_of_an_executed_approval",
		"P7_flood_resistance/flood_of_one_session",
	} {
		assert.Contains(t, string(out), "--- FAIL: TestRunFailsTheNaiveLoop/"+name+" ", name)
	}
	assert.Contains(t, string(out), "--- SKIP: TestRunFailsTheNaiveLoop/P5_non-repudiation/record_forged_or_altered ")
	assert.Contains(t, string(out), "--- PASS: TestRunFailsTheNaiveLoop/P2_effect_binding/approval_transfers_to_another_call ")
}

// refuser is an integration that refuses every call and every answer.
type refuser struct{}

func (refuser) Propose(context.Context, stepup.Call) (stepup.Ticket, error) {
	return stepup.Ticket{ID: "refused", Status: stepup.StatusDenied, Reason: "refused"}, nil
}

func (refuser) Wait(context.Context, stepup.TicketID) (stepup.Ticket, error) {
	return stepup.Ticket{ID: "refused", Status: stepup.StatusDenied}, nil
}

func (refuser) Execute(context.Context, stepup.TicketID) (stepup.Result, error) {
	return stepup.Result{}, stepup.ErrNotApproved
}

func (refuser) Approve(context.Context, stepup.TicketID, string) error { return stepup.ErrNotPermitted }
func (refuser) Deny(context.Context, stepup.TicketID, string) error    { return stepup.ErrNotPermitted }

// TestRefusingEverythingDoesNotPass shows every attack checks that the
// legitimate path works: an integration that never asks anyone and never
// runs anything holds no property.
func TestRefusingEverythingDoesNotPass(t *testing.T) {
	rep := attackkit.Assess(t, func(testing.TB, *attackkit.Tools) attackkit.Target {
		return attackkit.Target{Runtime: refuser{}, People: refuser{}, Say: func(context.Context, stepup.TicketID, string) error { return nil }}
	})
	for _, r := range rep.Results {
		if r.Outcome == attackkit.Skipped {
			continue
		}
		assert.Equal(t, attackkit.Broken, r.Outcome, "%s / %s", r.Property, r.Attack)
		assert.Contains(t, r.Detail, "control:", "%s / %s", r.Property, r.Attack)
	}
	assert.Equal(t, attackkit.Broken, rep.Outcome(attackkit.P1))
	assert.Equal(t, attackkit.Broken, rep.Outcome(attackkit.P7))
}
