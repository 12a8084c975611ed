package tooluse_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// runs counts the runs of send_email, and fails them when fail is set.
type runs struct {
	n    atomic.Int32
	fail bool
}

func (x *runs) Execute(context.Context, canon.Effect, string) ([]byte, error) {
	x.n.Add(1)
	if x.fail {
		return nil, errors.New("smtp: 451 try later")
	}
	return []byte(`{"sent":true}`), nil
}

// mailWorld is the seed catalog with send_email run by x and every other
// tool by a recorder.
func mailWorld(t testing.TB, x *runs) *stepuptest.Harness {
	t.Helper()
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		if tool.Name == "send_email" {
			opts = append(opts, gate.WithExecutor(tool.Name, x))
		} else {
			opts = append(opts, gate.WithExecutor(tool.Name, &stepuptest.Recorder{}))
		}
	}
	return stepuptest.NewGate(t, nil, opts...)
}

type actorKey struct{}

// arrival is an actor stopped at a point of its call, or done.
type arrival struct {
	actor   int
	point   string
	release chan struct{}
	done    bool
}

// stepped is a Runtime whose Wait and Execute stop the actor calling
// them (named by its context) before and after, until the scheduler lets
// it go on: one actor runs at a time, so a schedule is an interleaving.
// Its Execute ends as execute says, and it counts proposals.
type stepped struct {
	stepup.Runtime
	arrive   chan arrival
	execute  func(ctx context.Context, rt stepup.Runtime, id stepup.TicketID) (stepup.Result, error)
	proposed atomic.Int32
}

func (s *stepped) at(ctx context.Context, point string) {
	a, ok := ctx.Value(actorKey{}).(int)
	if !ok {
		return
	}
	release := make(chan struct{})
	s.arrive <- arrival{actor: a, point: point, release: release}
	<-release
}

func (s *stepped) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	s.proposed.Add(1)
	return s.Runtime.Propose(ctx, c)
}

func (s *stepped) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	dl, bounded := ctx.Deadline()
	left := time.Until(dl)
	s.at(ctx, "wait")
	if bounded { // the stop takes none of the caller's time
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), left)
		defer cancel()
	}
	tk, err := s.Runtime.Wait(ctx, id)
	s.at(ctx, "waited")
	return tk, err
}

func (s *stepped) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	s.at(ctx, "execute")
	res, err := s.execute(ctx, s.Runtime, id)
	s.at(ctx, "executed")
	return res, err
}

// ending is how the runs of a waiting ticket end, and the states a call
// joined to it may be told.
type ending struct {
	name    string
	fail    bool
	execute func(ctx context.Context, rt stepup.Runtime, id stepup.TicketID) (stepup.Result, error)
	runs    int32
	first   tooluse.State // the state of the call whose Execute came first
	others  []tooluse.State
}

func endings() []ending {
	plain := func(ctx context.Context, rt stepup.Runtime, id stepup.TicketID) (stepup.Result, error) {
		return rt.Execute(ctx, id)
	}
	return []ending{
		{name: "ran", execute: plain, runs: 1, first: tooluse.Ran, others: []tooluse.State{tooluse.Spent}},
		{name: "failed", fail: true, execute: plain, runs: 1, first: tooluse.Failed, others: []tooluse.State{tooluse.Spent}},
		{name: "outcome lost", runs: 1, first: tooluse.Unknown, others: []tooluse.State{tooluse.Spent, tooluse.Unknown},
			execute: func(ctx context.Context, rt stepup.Runtime, id stepup.TicketID) (stepup.Result, error) {
				_, _ = rt.Execute(ctx, id) // ran, and the answer lost on the way
				return stepup.Result{}, fmt.Errorf("connection reset: %w", stepup.ErrOutcomeUnknown)
			}},
		{name: "refused at execute", runs: 0, first: tooluse.NotRun, others: []tooluse.State{tooluse.NotRun},
			execute: func(context.Context, stepup.Runtime, stepup.TicketID) (stepup.Result, error) {
				return stepup.Result{}, fmt.Errorf("execute: %w", stepup.ErrExpired)
			}},
	}
}

// actor is one call on a waiting ticket: a retry through Run or Propose,
// or the original call resumed.
type actor string

const (
	retryRun     actor = "retry by Run"
	retryPropose actor = "retry by Propose"
	original     actor = "original resumed"
)

// interleave runs play once for every interleaving of its actors' stops,
// or until one fails t: choose picks which of n stopped actors goes on,
// and play reports the choices it was given. It returns how many
// interleavings it ran.
func interleave(t *testing.T, play func(choose func(n int) int) []int) int {
	var prefix []int
	count := 0
	for {
		var ns []int
		i := 0
		choices := play(func(n int) int {
			ns = append(ns, n)
			c := 0
			if i < len(prefix) {
				c = prefix[i]
			}
			i++
			return c
		})
		count++
		if t.Failed() {
			return count
		}
		// The next schedule: the last choice that has an untried
		// alternative, taken, and the first of everything after it.
		j := len(choices) - 1
		for j >= 0 && choices[j]+1 >= ns[j] {
			j--
		}
		if j < 0 {
			return count
		}
		prefix = append(slices.Clone(choices[:j]), choices[j]+1)
	}
}

// TestJoinedRetryIsAnsweredFromItsTicket plays two calls on one approved
// ticket (two retries that joined it, as a framework running a message's
// tool calls in parallel makes; or the original's resume and a retry) in
// every interleaving of their Wait and Execute calls, for every way the
// run can end. In each: the call ran at most once, nobody proposed it
// again, and every retry is answered from the ticket with what became of
// it: the run's own outcome for the call whose Execute came first, spent
// (or as lost) for the other.
func TestJoinedRetryIsAnsweredFromItsTicket(t *testing.T) {
	pairs := [][2]actor{{retryRun, retryRun}, {original, retryRun}, {retryRun, retryPropose}, {original, retryPropose}}
	for _, end := range endings() {
		for _, pair := range pairs {
			t.Run(end.name+"/"+string(pair[0])+"+"+string(pair[1]), func(t *testing.T) {
				t.Parallel()
				n := interleave(t, func(choose func(int) int) []int {
					return playJoins(t, end, pair, choose)
				})
				t.Logf("%d interleavings", n)
			})
		}
	}
}

// playJoins plays one interleaving of the calls of pair on a ticket
// approved before either starts, and checks its outcomes.
func playJoins(t *testing.T, end ending, pair [2]actor, choose func(int) int) []int {
	x := &runs{fail: end.fail}
	h := mailWorld(t, x)
	rt := &stepped{Runtime: h.Gate, arrive: make(chan arrival), execute: end.execute}
	g := tooluse.New(rt, &tooluse.Options{Wait: 200 * time.Millisecond})
	ctx := context.Background()

	first := g.Propose(ctx, scope(), email("call_1", "finance@example.com"))
	require.Equal(t, tooluse.Pending, first.State, first.Text())
	_, err := h.Approve(first.Ticket.ID)
	require.NoError(t, err)
	d, _ := first.Deferred()

	outs := make([]tooluse.Outcome, len(pair))
	var wg sync.WaitGroup
	for i, a := range pair {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx := context.WithValue(ctx, actorKey{}, i)
			r := email(fmt.Sprintf("retry_%d", i), "finance@example.com")
			switch a {
			case retryRun:
				outs[i] = g.Run(actx, scope(), r)
			case retryPropose:
				outs[i] = g.Propose(actx, scope(), r)
			case original:
				outs[i] = g.ResumeDeferred(actx, d)
			}
			rt.arrive <- arrival{actor: i, done: true}
		}()
	}

	// Every actor runs to its first stop (its lookup in the index is
	// behind it); from there one actor at a time goes on.
	stopped := map[int]arrival{}
	var choices, order []int
	var trace []string
	for range pair {
		if a := <-rt.arrive; !a.done {
			stopped[a.actor] = a
		}
	}
	for len(stopped) > 0 {
		ids := make([]int, 0, len(stopped))
		for id := range stopped {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		c := choose(len(ids))
		choices = append(choices, c)
		a := stopped[ids[c]]
		delete(stopped, a.actor)
		trace = append(trace, fmt.Sprintf("%d:%s", a.actor, a.point))
		if a.point == "execute" {
			order = append(order, a.actor)
		}
		close(a.release)
		if next := <-rt.arrive; !next.done {
			stopped[next.actor] = next
		}
	}
	wg.Wait()

	schedule := strings.Join(trace, " ")
	assert.Equal(t, end.runs, x.n.Load(), "%s: runs of the call", schedule)
	assert.Equal(t, int32(1), rt.proposed.Load(), "%s: the call was proposed again", schedule)
	for i, o := range outs {
		assert.Equal(t, first.Ticket.ID, o.Ticket.ID, "%s: %s answered from ticket %s: %q", schedule, pair[i], o.Ticket.ID, o.Text())
		if pair[i] == original {
			assert.Equal(t, "call_1", o.CallID, schedule)
		} else {
			assert.True(t, o.Joined, "%s: %s did not join: %q", schedule, pair[i], o.Text())
			assert.Equal(t, fmt.Sprintf("retry_%d", i), o.CallID, schedule)
		}
		want := end.others
		switch {
		case len(order) > 0 && order[0] == i:
			want = []tooluse.State{end.first}
		case pair[i] == retryPropose:
			want = append([]tooluse.State{tooluse.Runnable}, end.others...)
		}
		assert.Contains(t, want, o.State, "%s: %s was told %q", schedule, pair[i], o.Text())
	}
	return choices
}

// TestJoinedRetryOfAFinalTicketIsANewRequest: a retry that finds the
// ticket it would join already denied, spent by another gate's caller or
// expired, before this Gate executed it, is proposed anew and waits for a
// decision of its own; nothing runs.
func TestJoinedRetryOfAFinalTicketIsANewRequest(t *testing.T) {
	for name, settle := range map[string]func(t *testing.T, h *stepuptest.Harness, id stepup.TicketID){
		"denied": func(t *testing.T, h *stepuptest.Harness, id stepup.TicketID) {
			_, err := h.Deny(id, "not what I asked for")
			require.NoError(t, err)
		},
		"spent elsewhere": func(t *testing.T, h *stepuptest.Harness, id stepup.TicketID) {
			_, err := h.Approve(id)
			require.NoError(t, err)
			_, err = h.Gate.Execute(context.Background(), id) // not through this tooluse.Gate
			require.NoError(t, err)
		},
		"expired": func(t *testing.T, h *stepuptest.Harness, _ stepup.TicketID) {
			h.Clock.Advance(24 * time.Hour)
		},
	} {
		for _, run := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/run=%v", name, run), func(t *testing.T) {
				x := &runs{}
				h := mailWorld(t, x)
				g := tooluse.New(h.Gate, &tooluse.Options{Wait: 20 * time.Millisecond})
				ctx := context.Background()
				first := g.Run(ctx, scope(), email("call_1", "finance@example.com"))
				require.Equal(t, tooluse.Pending, first.State, first.Text())
				settle(t, h, first.Ticket.ID)
				before := x.n.Load()

				r := email("retry", "finance@example.com")
				var o tooluse.Outcome
				if run {
					o = g.Run(ctx, scope(), r)
				} else {
					o = g.Propose(ctx, scope(), r)
				}
				assert.False(t, o.Joined, o.Text())
				assert.Equal(t, tooluse.Pending, o.State, o.Text())
				assert.NotEqual(t, first.Ticket.ID, o.Ticket.ID)
				assert.Equal(t, before, x.n.Load(), "nothing ran")
			})
		}
	}
}
