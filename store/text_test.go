package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestCheckRefusesTextNotUTF8: every backend refuses, before any
// write, a ticket or decision whose text is not UTF-8; U+FFFD itself is
// text like any other.
func TestCheckRefusesTextNotUTF8(t *testing.T) {
	tickets := []struct {
		name   string
		mutate func(*store.Approval, string)
	}{
		{"id", func(a *store.Approval, s string) { a.ID = s }},
		{"tool", func(a *store.Approval, s string) { a.Tool = s }},
		{"effect class", func(a *store.Approval, s string) { a.EffectClass = s }},
		{"user", func(a *store.Approval, s string) { a.User = s }},
		{"session", func(a *store.Approval, s string) { a.Session = s }},
		{"task", func(a *store.Approval, s string) { a.Task = s }},
		{"step", func(a *store.Approval, s string) { a.Step = s }},
		{"policy version", func(a *store.Approval, s string) { a.PolicyVersion = s }},
		{"rationale", func(a *store.Approval, s string) { a.Rationale = s }},
		{"requester user", func(a *store.Approval, s string) { a.Requester.User = s }},
		{"requester agent", func(a *store.Approval, s string) { a.Requester.Agent = s }},
		{"delegation", func(a *store.Approval, s string) { a.Requester.Delegations = []string{s} }},
		{"taint", func(a *store.Approval, s string) { a.Taint = []string{"web", s} }},
		{"approvers", func(a *store.Approval, s string) { a.Approvers = s }},
	}
	for _, c := range tickets {
		t.Run("Approval/"+c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			c.mutate(&a, "x\xffy")
			assert.ErrorIs(t, a.Check(), store.ErrInvalid)
			a = storetest.Ticket("s1", "u1", 1)
			c.mutate(&a, "x\uFFFDy")
			assert.NoError(t, a.Check())
		})
	}
	r := store.Resolution{To: store.Denied, Approver: "alice", Reason: "no", At: t0}
	require.NoError(t, r.Check())
	for _, bad := range []store.Resolution{
		{To: store.Denied, Approver: "al\xffice", Reason: "no", At: t0},
		{To: store.Denied, Approver: "alice", Reason: "n\xc3", At: t0},
	} {
		assert.ErrorIs(t, bad.Check(), store.ErrInvalid)
	}
	for _, bad := range []store.Claim{
		{Key: "k\xff", Owner: "gate", At: t0, LeaseUntil: t0.Add(time.Second)},
		{Key: "k", Owner: "ga\xc3te", At: t0, LeaseUntil: t0.Add(time.Second)},
	} {
		assert.ErrorIs(t, bad.Check(), store.ErrInvalid)
	}
}
