package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// TestReviewTextNotUTF8: text that is not UTF-8 is refused with
// store.ErrInvalid and nothing is written, as the PostgreSQL backend
// refuses it. This backend used to keep it, and to append audit records
// whose hash they shared with the record holding U+FFFD instead.
func TestReviewTextNotUTF8(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	t.Cleanup(func() { _ = s.Close() })

	a := storetest.Ticket("s1", "u1", 1)
	a.ID = "refused"
	a.Taint = []string{"web\xff"}
	_, _, err := s.Park(ctx, a, store.Caps{})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.Get(ctx, "refused")
	assert.ErrorIs(t, err, store.ErrNotFound)

	p, _, err := s.Park(ctx, storetest.Ticket("s2", "u2", 2), store.Caps{})
	require.NoError(t, err)
	_, err = s.Resolve(ctx, p.ID, store.Resolution{To: store.Denied, Approver: "al\xffice",
		At: time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)})
	require.ErrorIs(t, err, store.ErrInvalid)
	got, err := s.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Pending, got.State)

	_, err = s.AppendAudit(ctx, receipt.AuditRecord{Time: 1, Decision: receipt.DecisionDeny, Reason: "\xff"})
	require.ErrorIs(t, err, store.ErrInvalid)
	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Zero(t, head.Seq, "nothing appended")
}
