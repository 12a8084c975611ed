package tickets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Queue checks [store.Tickets.Queue]: a generator parks tickets of random
// users, routed to random groups or none, some escalating to another
// group at a random time, with random expiries and in random states, then
// reads random queues back with random page sizes and compares each with
// the same selection made in memory: pending only, unexpired at the
// queue's time, the user's, a group's or escalated to a group by then,
// each once, soonest expiry first.
func Queue(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	at := fixture.Now(t, s)
	rng := rand.New(rand.NewPCG(3, 4))
	groups := []string{"", "group:ops", "group:finance", "group:legal"}
	var all []store.Approval
	for n := 0; n < 150; n++ {
		a := fixture.TicketAt(fmt.Sprintf("s%d", n), fmt.Sprintf("u%d", rng.IntN(3)), n, at)
		// Expiries collide in threes, so the ID breaks ties.
		a.ExpiresAt = at.Add(time.Duration(1+rng.IntN(50)) * time.Minute)
		a.Approvers = groups[rng.IntN(len(groups))]
		if a.Approvers != "" && rng.IntN(2) == 0 {
			a.EscalatesTo = groups[1+rng.IntN(len(groups)-1)]
			a.EscalatesAt = at.Add(time.Duration(rng.IntN(60)) * time.Minute)
		}
		p, _, err := s.Park(t.Context(), a, store.Caps{}, nil)
		require.NoError(t, err)
		require.Equal(t, a.EscalatesTo, p.EscalatesTo)
		require.True(t, a.EscalatesAt.Equal(p.EscalatesAt), "escalation time kept: %v, got %v", a.EscalatesAt, p.EscalatesAt)
		switch rng.IntN(5) {
		case 1:
			p, err = s.Resolve(t.Context(), p.ID, fixture.Approve(fixture.Now(t, s)), nil)
		case 2:
			p, err = s.Resolve(t.Context(), p.ID, store.Resolution{To: store.Denied, At: fixture.Now(t, s)}, nil)
		}
		require.NoError(t, err)
		all = append(all, p)
	}
	queues := []store.QueueFilter{
		{User: "u0"},
		{User: "u1", Groups: []string{"group:ops"}},
		{Groups: []string{"group:finance", "group:legal"}},
		{User: "u2", Groups: []string{"group:ops", "group:finance", "group:legal"}},
		{User: "nobody", Groups: []string{"group:none"}},
	}
	for i, q := range queues {
		for _, skip := range []time.Duration{0, 20 * time.Minute, 33*time.Minute + time.Second, 49 * time.Minute, time.Hour} {
			q.Now = at.Add(skip)
			var want []string
			sorted := slices.Clone(all)
			slices.SortFunc(sorted, func(a, b store.Approval) int { return store.QueueOrder(&a, &b) })
			for _, a := range sorted {
				escalated := a.EscalatesTo != "" && !a.EscalatesAt.After(q.Now) && slices.Contains(q.Groups, a.EscalatesTo)
				if a.State == store.Pending && q.Now.Before(a.ExpiresAt) &&
					(a.User == q.User || (a.Approvers != "" && slices.Contains(q.Groups, a.Approvers)) || escalated) {
					want = append(want, a.ID)
				}
			}
			for _, limit := range []int{0, 1, 2, 1 + rng.IntN(30), store.MaxListLimit} {
				q.Limit = limit
				got := allPages(t, q.PageSize(), func(after string) ([]store.Approval, string, error) {
					q.After = after
					return s.Queue(t.Context(), q)
				})
				assert.Equal(t, want, got, "queue %d at +%v, limit %d", i, skip, limit)
			}
		}
	}
	t.Run("Refusals", func(t *testing.T) {
		now := fixture.Now(t, s)
		for name, q := range map[string]store.QueueFilter{
			"no time":      {User: "u0"},
			"no source":    {Now: now},
			"empty group":  {Now: now, Groups: []string{""}},
			"negative":     {Now: now, User: "u0", Limit: -1},
			"many groups":  {Now: now, Groups: make([]string, store.MaxQueueGroups+1)},
			"long user id": {Now: now, User: string(make([]byte, store.MaxKeySize+1))},
		} {
			_, _, err := s.Queue(t.Context(), q)
			assert.Error(t, err, name)
		}
		_, _, err := s.Queue(t.Context(), store.QueueFilter{Now: now, User: "u0", After: "no-such-ticket"})
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
}

// allPages reads every page read returns, from the first, checking each
// holds at most size tickets and that each cursor is its page's last id,
// and returns the ids in order.
func allPages(t *testing.T, size int, read func(after string) ([]store.Approval, string, error)) []string {
	t.Helper()
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 200, "paging ends")
		page, next, err := read(after)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(page), size)
		for _, a := range page {
			got = append(got, a.ID)
		}
		if next == "" {
			return got
		}
		require.NotEmpty(t, page)
		assert.Equal(t, page[len(page)-1].ID, next, "the cursor is the page's last id")
		after = next
	}
}
