// Package audit checks the audit chain for the conformance suite: records
// appended and stamped by the store's clock, read back by sequence, task
// and time window, each window verifying against the record before it;
// and notes: a state change and its record are written together or not
// at all.
package audit

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// Audit checks the audit chain: appended records are sealed in order,
// verify with [audit.VerifyChain], and read back by sequence, task and
// time window; bad records are refused.
func Audit(t *testing.T, newStore func(*testing.T) store.Store) {
	ctx := t.Context()
	s := newStore(t)
	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Zero(t, head.Seq, "an empty chain has no head")

	before := fixture.Now(t, s)
	var appended []audit.Record
	for i := 0; i < 10; i++ {
		// The caller's time is ignored: the store stamps its own.
		r := fixture.Record(fmt.Sprintf("task-%d", i%3), fixture.T0.Add(-time.Duration(i)*time.Hour))
		r.Seq, r.Hash, r.PrevHash = 999, canon.Digest{7}, canon.Digest{8} // ignored
		if i == 4 {
			r.Args = json.RawMessage(`{"amount": 5}`)
		}
		got, err := s.AppendAudit(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, int64(i+1), got.Seq)
		appended = append(appended, got)
	}
	after := fixture.Now(t, s).Add(time.Millisecond)
	all := fixture.Chain(t, s)
	require.Len(t, all, 10)
	assert.Equal(t, appended, all, "records read back as appended")
	assert.Equal(t, json.RawMessage(`{"amount":5}`), all[4].Args, "args are stored canonical")
	for _, r := range all {
		assert.GreaterOrEqual(t, r.Time, before.UnixMilli(), "stamped by the store's clock")
		assert.LessOrEqual(t, r.Time, after.UnixMilli(), "stamped by the store's clock")
	}
	head, err = s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, all[9], head)

	byTime, err := s.AuditRange(ctx, time.UnixMilli(all[0].Time), time.UnixMilli(all[9].Time+1))
	require.NoError(t, err)
	assert.Equal(t, all, byTime, "a time range holding every record")
	for _, w := range [][2]int{{0, 10}, {3, 6}, {9, 10}, {5, 5}, {0, 1}} {
		from, to := uint64(w[0]+1), uint64(w[1]+1)
		window, err := s.AuditSeq(ctx, from, to)
		require.NoError(t, err)
		require.Len(t, window, w[1]-w[0], "from inclusive, to exclusive: %v", w)
		if len(window) == 0 {
			continue
		}
		assert.Equal(t, int64(from), window[0].Seq)
		anchor := canon.Digest{}
		if w[0] > 0 {
			anchor = all[w[0]-1].Hash
		}
		assert.NoError(t, audit.VerifyChain(window, anchor), "a window verifies against its anchor")
	}
	none, err := s.AuditSeq(ctx, 11, 20)
	require.NoError(t, err)
	assert.Empty(t, none)
	none, err = s.AuditSeq(ctx, 5, 3)
	require.NoError(t, err)
	assert.Empty(t, none)

	task, err := s.AuditByTask(ctx, "task-1")
	require.NoError(t, err)
	var seqs []int64
	for _, r := range task {
		seqs = append(seqs, r.Seq)
	}
	assert.Equal(t, []int64{2, 5, 8}, seqs)
	none, err = s.AuditByTask(ctx, "no-task")
	require.NoError(t, err)
	assert.Empty(t, none)

	bad := fixture.Record("task-x", fixture.T0)
	bad.Decision = ""
	_, err = s.AppendAudit(ctx, bad)
	assert.ErrorIs(t, err, store.ErrInvalid)
	big := fixture.Record("task-x", fixture.T0)
	big.Args = json.RawMessage(`"` + string(make([]byte, store.MaxFieldSize)) + `"`)
	_, err = s.AppendAudit(ctx, big)
	assert.ErrorIs(t, err, store.ErrTooLarge)
	unhashable := fixture.Record("task-x", fixture.T0)
	unhashable.Args = json.RawMessage(`{"n": 1e400}`)
	_, err = s.AppendAudit(ctx, unhashable)
	assert.ErrorIs(t, err, store.ErrInvalid, "args canon refuses cannot be chained")
	notUTF8 := fixture.Record("task-x", fixture.T0)
	notUTF8.Reason = "\xff"
	_, err = s.AppendAudit(ctx, notUTF8)
	assert.ErrorIs(t, err, store.ErrInvalid, "text that is not UTF-8 cannot be chained")
	head, err = s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(10), head.Seq, "refused appends leave the chain as it was")
}

// TimeWindows checks that exports by time window verify: every
// window [from, to) of the chain's own times is a consecutive run of
// records that verifies against the record before it.
func TimeWindows(t *testing.T, s store.Store) {
	all := fixture.Chain(t, s)
	for i := range all {
		for j := i; j < len(all); j++ {
			from, to := all[i].Time, all[j].Time+1
			got, err := s.AuditRange(t.Context(), time.UnixMilli(from), time.UnixMilli(to))
			require.NoError(t, err)
			var want []audit.Record
			for _, r := range all {
				if r.Time >= from && r.Time < to {
					want = append(want, r)
				}
			}
			require.Equal(t, want, got)
			anchor := canon.Digest{}
			if got[0].Seq > 1 {
				anchor = all[got[0].Seq-2].Hash
			}
			require.NoError(t, audit.VerifyChain(got, anchor), "window [%d, %d) verifies", from, to)
		}
	}
}
