package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestDwellTellsAnAgentNothing: an agent holding only the ticket id posts
// answers it can make (garbage, a stranger's passkey over the ticket's
// challenge, Dana's answer of another ticket) at many times around the
// dwell, to a ticket whose card was never shown and to one shown at
// once; every answer is refused the same way in both, never as too
// soon, so the refusals say nothing about whether an approver has the
// card on screen. (Judging the dwell before the answer, as the gate once
// did, answers too_fast here while the dwell runs.)
func TestDwellTellsAnAgentNothing(t *testing.T) {
	ctx := context.Background()
	offsets := []time.Duration{0, time.Millisecond, time.Second, gate.DefaultDwell / 2, gate.DefaultDwell - time.Millisecond,
		gate.DefaultDwell, gate.DefaultDwell + time.Second, 5 * time.Minute}
	type probe struct {
		name   string
		answer func(w *world, p gate.Prompt, other []byte) []byte
	}
	elsewhere := newWorld(t) // a passkey enrolled at another gate, not this one
	stranger, err := stepuptest.Enroll(ctx, elsewhere.Enrollment, "user:mallory")
	require.NoError(t, err)
	probes := []probe{
		{"garbage", func(*world, gate.Prompt, []byte) []byte { return []byte(`{"id":"x","response":{}}`) }},
		{"not json", func(*world, gate.Prompt, []byte) []byte { return []byte("\x00\xff") }},
		{"another ticket's answer", func(_ *world, _ gate.Prompt, other []byte) []byte { return other }},
		{"an unenrolled passkey", func(_ *world, p gate.Prompt, _ []byte) []byte {
			a, err := stranger.Assert(p.Options, stepuptest.WithCredential(stranger.CredentialIDs()[0]))
			require.NoError(t, err)
			return a
		}},
	}
	outcome := func(err error) string {
		require.Error(t, err)
		assert.NotErrorIs(t, err, stepup.ErrTooFast)
		code, status, _ := remote.Classify(err)
		return fmt.Sprint(code, status, " ", err)
	}
	for _, pr := range probes {
		for _, off := range offsets {
			t.Run(fmt.Sprint(pr.name, "/", off), func(t *testing.T) {
				seen := map[bool]string{}
				for _, shown := range []bool{false, true} {
					w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external"))
					tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
					require.NoError(t, err)
					other, err := w.Gate.Propose(ctx, sendEmail("audit@example.com"))
					require.NoError(t, err)
					po, err := w.Gate.Desk().Prompt(ctx, other.ID)
					require.NoError(t, err)
					otherAnswer, err := w.Authenticator.Assert(po.Options)
					require.NoError(t, err)
					p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
					require.NoError(t, err)
					if shown {
						require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
					}
					w.Clock.Advance(off)
					_, err = w.Gate.Desk().Approve(ctx, tk.ID, pr.answer(w, p, otherAnswer))
					seen[shown] = outcome(err)
				}
				assert.Equal(t, seen[false], seen[true], "the refusal differs with the showing")
				assert.NotContains(t, seen[true], remote.CodeTooFast)
			})
		}
	}
}

// TestTooFastAnswerNeverCountsLater: an answer refused as too soon,
// resent byte for byte once the dwell is over, is refused again, even
// from a passkey whose signature counter never moves (so the counter
// cannot catch the copy); a fresh signature then approves.
func TestTooFastAnswerNeverCountsLater(t *testing.T) {
	ctx := context.Background()
	for _, wait := range []time.Duration{gate.DefaultDwell, gate.DefaultDwell + time.Second, 5 * time.Minute} {
		t.Run(fmt.Sprint(wait), func(t *testing.T) {
			w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external"))
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
			early, err := w.Authenticator.Assert(p.Options, stepuptest.WithSignCount(0))
			require.NoError(t, err)
			_, err = w.Gate.Desk().Approve(ctx, tk.ID, early)
			require.ErrorIs(t, err, stepup.ErrTooFast)

			w.Clock.Advance(wait)
			_, err = w.Gate.Desk().Approve(ctx, tk.ID, early)
			require.ErrorIs(t, err, stepup.ErrTooFast, "the early answer, resent after the dwell")
			got, err := w.Gate.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status)

			fresh, err := w.Authenticator.Assert(p.Options, stepuptest.WithSignCount(0))
			require.NoError(t, err)
			got, err = w.Gate.Desk().Approve(ctx, tk.ID, fresh)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}

// TestShowForAnswersTheSameWhoeverAsks: the showing's answer is the
// class's dwell from now whether or not the card was shown before, and
// an approval at its AcceptableAt is never too soon.
func TestShowForAnswersTheSameWhoeverAsks(t *testing.T) {
	ctx := context.Background()
	for _, before := range []time.Duration{-1, 0, time.Second, gate.DefaultDwell - time.Millisecond, time.Minute} {
		t.Run(fmt.Sprint(before), func(t *testing.T) {
			w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external"))
			tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
			require.NoError(t, err)
			p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			if before >= 0 {
				require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID)) // someone else's screen
				w.Clock.Advance(before)
			}
			s, err := w.Gate.Desk().ShowFor(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, gate.DefaultDwell, s.Dwell)
			assert.Equal(t, w.Clock.Now(), s.Now)
			assert.Equal(t, s.Now.Add(gate.DefaultDwell), s.AcceptableAt)
			w.Clock.Advance(s.AcceptableAt.Sub(w.Clock.Now()))
			answer, err := w.Authenticator.Assert(p.Options)
			require.NoError(t, err)
			got, err := w.Gate.Desk().Approve(ctx, tk.ID, answer)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}
