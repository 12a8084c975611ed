package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// Record returns an audit record of task at time at. It is exported for
// benchmarks and backend-specific tests.
func Record(task string, at time.Time) receipt.AuditRecord {
	return receipt.AuditRecord{
		Time:        at.UnixMilli(),
		TicketID:    "ticket-" + task,
		Task:        task,
		Step:        "step-1",
		Session:     "s1",
		Tool:        "pay",
		EffectClass: "irreversible",
		ArgsDigest:  canon.Sum([]byte(task)),
		Principal:   canon.Principal{User: "u1", Agent: "agent-1"},
		Decision:    receipt.DecisionNeedsApproval,
		Reason:      "irreversible effect",
		Taint:       []string{"web"},
	}
}

func testAudit(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Zero(t, head.Seq, "an empty chain has no head")

	var appended []receipt.AuditRecord
	for i := 0; i < 10; i++ {
		r := Record(fmt.Sprintf("task-%d", i%3), t0.Add(time.Duration(i)*time.Second))
		r.Seq, r.Hash, r.PrevHash = 999, canon.Digest{7}, canon.Digest{8} // ignored
		if i == 4 {
			r.Args = json.RawMessage(`{"amount": 5}`)
		}
		got, err := s.AppendAudit(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, int64(i+1), got.Seq)
		appended = append(appended, got)
	}
	all, err := s.AuditRange(ctx, t0, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, all, 10)
	require.NoError(t, receipt.VerifyChain(all, canon.Digest{}), "the stored chain verifies from the start")
	assert.Equal(t, appended, all, "records read back as appended")
	assert.Equal(t, json.RawMessage(`{"amount":5}`), all[4].Args, "args are stored canonical")
	head, err = s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, all[9], head)

	window, err := s.AuditRange(ctx, t0.Add(3*time.Second), t0.Add(6*time.Second))
	require.NoError(t, err)
	require.Len(t, window, 3, "from inclusive, to exclusive")
	assert.Equal(t, int64(4), window[0].Seq)
	assert.NoError(t, receipt.VerifyChain(window, all[2].Hash), "a window verifies against its anchor")

	task, err := s.AuditByTask(ctx, "task-1")
	require.NoError(t, err)
	var seqs []int64
	for _, r := range task {
		seqs = append(seqs, r.Seq)
	}
	assert.Equal(t, []int64{2, 5, 8}, seqs)
	none, err := s.AuditByTask(ctx, "no-task")
	require.NoError(t, err)
	assert.Empty(t, none)

	bad := Record("task-x", t0)
	bad.Decision = ""
	_, err = s.AppendAudit(ctx, bad)
	assert.ErrorIs(t, err, store.ErrInvalid)
	big := Record("task-x", t0)
	big.Args = json.RawMessage(`"` + string(make([]byte, store.MaxFieldSize)) + `"`)
	_, err = s.AppendAudit(ctx, big)
	assert.ErrorIs(t, err, store.ErrTooLarge)
	unhashable := Record("task-x", t0)
	unhashable.Args = json.RawMessage(`{"n": 1e400}`)
	_, err = s.AppendAudit(ctx, unhashable)
	assert.ErrorIs(t, err, store.ErrInvalid, "args canon refuses cannot be chained")
	head, err = s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(10), head.Seq, "refused appends leave the chain as it was")
}
