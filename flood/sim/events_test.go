package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEventsOrder: over generated pushes and pops, events come out by
// time, and events at one time in the order they were scheduled.
func TestEventsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for range 200 {
		var q events
		var seq uint64
		last := event{at: -1}
		for range 300 {
			if len(q) == 0 || rng.IntN(3) > 0 {
				seq++
				// Few distinct times, so ties are common; never before
				// the last event popped, as in a simulation.
				q.push(event{at: max(last.at, 0) + time.Duration(rng.IntN(5)), seq: seq})
				continue
			}
			ev := q.pop()
			require.True(t, ev.at > last.at || (ev.at == last.at && ev.seq > last.seq), "%+v after %+v", ev, last)
			last = ev
		}
	}
}
