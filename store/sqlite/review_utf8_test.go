package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestReviewTextNotUTF8: text that is not UTF-8 is refused with
// store.ErrInvalid and nothing is written, as PostgreSQL refuses it. This
// backend used to keep it: lists came back with U+FFFD in place of the
// bytes, and an audit record was stored in another form than the one
// AppendAudit returned, under a hash shared with that other form.
func TestReviewTextNotUTF8(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)
	s := open(t, filepath.Join(t.TempDir(), "asu.db"))

	parks := []struct {
		name   string
		mutate func(*store.Approval)
	}{
		{"taint label", func(a *store.Approval) { a.Taint = []string{"web\xff"} }},
		{"delegation", func(a *store.Approval) { a.Requester.Delegations = []string{"pl\xffanner"} }},
		{"session", func(a *store.Approval) { a.Session = "s\xff" }},
		{"rationale", func(a *store.Approval) { a.Rationale = "because \xff" }},
	}
	for _, c := range parks {
		t.Run("Park/"+c.name, func(t *testing.T) {
			a := storetest.Ticket("s1", "u1", 1)
			a.ID = "refused"
			c.mutate(&a)
			_, _, err := s.Park(ctx, a, store.Caps{})
			require.ErrorIs(t, err, store.ErrInvalid)
			_, err = s.Get(ctx, "refused")
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}

	t.Run("Resolve", func(t *testing.T) {
		a, _, err := s.Park(ctx, storetest.Ticket("s2", "u2", 2), store.Caps{})
		require.NoError(t, err)
		_, err = s.Resolve(ctx, a.ID, store.Resolution{To: store.Denied, Approver: "alice", Reason: "no \xff", At: at})
		require.ErrorIs(t, err, store.ErrInvalid)
		got, err := s.Get(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, store.Pending, got.State)
	})

	t.Run("AppendAudit", func(t *testing.T) {
		first, err := s.AppendAudit(ctx, receipt.AuditRecord{Time: 1, Decision: receipt.DecisionAllow})
		require.NoError(t, err)
		_, err = s.AppendAudit(ctx, receipt.AuditRecord{Time: 2, Decision: receipt.DecisionDeny, Session: "s\xff"})
		require.ErrorIs(t, err, store.ErrInvalid)
		head, err := s.AuditHead(ctx)
		require.NoError(t, err)
		assert.Equal(t, first.Hash, head.Hash, "nothing appended")
	})
}
