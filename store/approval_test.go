package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
