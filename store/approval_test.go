package store_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestCheckExpiryWithinCreationMicrosecond: backends keep times to the
// microsecond, so a ticket that expires within the microsecond it was
// created in would be stored already expired by SQLite, refused by
// PostgreSQL's constraint and kept live by the memory store. Check refuses
// it for every backend.
func TestCheckExpiryWithinCreationMicrosecond(t *testing.T) {
	cases := []struct {
		name             string
		created, expires time.Duration // after t0
		ok               bool
	}{
		{"same microsecond", 100 * time.Nanosecond, 900 * time.Nanosecond, false},
		{"equal", 0, 0, false},
		{"next microsecond", 900 * time.Nanosecond, time.Microsecond, true},
		{"a minute", 0, time.Minute, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			a.CreatedAt, a.ExpiresAt = t0.Add(c.created), t0.Add(c.expires)
			if c.ok {
				assert.NoError(t, a.Check())
			} else {
				assert.ErrorIs(t, a.Check(), store.ErrInvalid)
			}
		})
	}
}

func TestCheckApproved(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*store.Approval)
		ok     bool
	}{
		{"pending", func(*store.Approval) {}, true},
		{"approved by policy", func(a *store.Approval) { a.State, a.Approver = store.Approved, "policy" }, true},
		{"approved with evidence and time", func(a *store.Approval) {
			a.State, a.Approver, a.Evidence, a.ResolvedAt = store.Approved, "policy", []byte(`{}`), a.CreatedAt
		}, true},
		{"approved by nobody", func(a *store.Approval) { a.State = store.Approved }, false},
		{"approved before creation", func(a *store.Approval) {
			a.State, a.Approver, a.ResolvedAt = store.Approved, "policy", a.CreatedAt.Add(-time.Microsecond)
		}, false},
		{"approved and consumed", func(a *store.Approval) { a.State, a.Approver, a.Fence = store.Approved, "policy", 1 }, false},
		{"approved and leased", func(a *store.Approval) {
			a.State, a.Approver, a.LeaseUntil = store.Approved, "policy", a.ExpiresAt
		}, false},
		{"pending with an owner", func(a *store.Approval) { a.Owner = "gate-1" }, false},
		{"pending with a reason", func(a *store.Approval) { a.Reason = "ok" }, false},
		{"revoked", func(a *store.Approval) { a.State, a.Approver = store.Revoked, "policy" }, false},
		{"executing", func(a *store.Approval) { a.State = store.Executing }, false},
		{"pending with a vote", func(a *store.Approval) {
			a.Votes = []store.Vote{{Approver: "user:erin", At: a.CreatedAt}}
		}, false},
		{"approved with a vote", func(a *store.Approval) {
			a.State, a.Approver, a.Votes = store.Approved, "policy", []store.Vote{{Approver: "user:erin", At: a.CreatedAt}}
		}, false},
		{"already shown", func(a *store.Approval) { a.ShownAt = a.CreatedAt }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			c.mutate(&a)
			if c.ok {
				assert.NoError(t, a.Check())
			} else {
				assert.ErrorIs(t, a.Check(), store.ErrInvalid)
			}
		})
	}
}

func TestStateClasses(t *testing.T) {
	terminal := map[store.State]bool{store.Denied: true, store.Expired: true, store.Cancelled: true,
		store.Revoked: true, store.Done: true, store.Failed: true, store.Abandoned: true}
	ran := map[store.State]bool{store.Done: true, store.Failed: true, store.Abandoned: true}
	for _, s := range []store.State{store.Pending, store.Approved, store.Denied, store.Expired, store.Cancelled,
		store.Revoked, store.Executing, store.Done, store.Failed, store.Abandoned} {
		assert.True(t, s.Valid(), s)
		assert.Equal(t, terminal[s], s.Terminal(), s)
		assert.Equal(t, ran[s], s.Ran(), s)
	}
	assert.False(t, store.State("").Terminal())
}

// TestCloneSharesNothing: for byte fields nil, empty or not, a clone
// equals its original, keeps nil and empty apart, and writing into or
// appending to any of its fields changes neither the original nor the
// clone's other fields.
func TestCloneSharesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	field := func() []byte {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	for range 500 {
		a := storetest.Ticket("s1", "u1", 1)
		a.Effect, a.Card, a.Evidence, a.Result = field(), field(), field(), field()
		a.Votes = []store.Vote{{Approver: "alice", Evidence: field()}}
		want := a.Clone()
		c := a.Clone()
		require.Equal(t, a, c)
		assert.Equal(t, a.Effect == nil, c.Effect == nil)
		assert.Equal(t, a.Card == nil, c.Card == nil)
		assert.Equal(t, a.Evidence == nil, c.Evidence == nil)
		assert.Equal(t, a.Result == nil, c.Result == nil)
		fields := []*[]byte{&c.Effect, &c.Card, &c.Evidence, &c.Result, &c.Votes[0].Evidence}
		i := r.IntN(len(fields))
		others := make([][]byte, len(fields))
		for j, f := range fields {
			others[j] = bytes.Clone(*f)
		}
		f := fields[i]
		for k := range *f {
			(*f)[k] ^= 0xff
		}
		*f = append(*f, 'x', 'y', 'z')
		for j, g := range fields {
			if j != i {
				assert.Equal(t, others[j], *g, "field %d changed when field %d was written", j, i)
			}
		}
		assert.Equal(t, want, a, "the original changed with its clone")
	}
}
