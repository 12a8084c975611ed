package grant_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

func record(uses int) grant.Record {
	return grant.Record{User: "user:dana", Uses: uses, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
}

func TestUse(t *testing.T) {
	ctx := context.Background()
	ok := refund(`{"order":"A-17","currency":"EUR","amount":120}`)
	steps := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
		refund(`{"order":"C-88","amount":12}`),
	}
	plan := grant.Plan(digest(t, steps[0]), digest(t, steps[1]), digest(t, steps[2]))

	// use is one attempt: the effect, the time after t0, and the outcome.
	type use struct {
		e    canon.Effect
		at   time.Duration
		want error // nil, or a sentinel
		left int   // Remaining after a successful use
	}
	tests := []struct {
		name string
		g    grant.Grant
		rec  grant.Record
		uses []use
	}{
		{
			name: "template with two uses",
			g:    refundTemplate(), rec: record(2),
			uses: []use{{e: ok, left: 1}, {e: ok, left: 0}, {e: ok, want: grant.ErrUsedUp}},
		},
		{
			name: "not covered takes no use",
			g:    refundTemplate(), rec: record(1),
			uses: []use{
				{e: refund(`{"order":"A-17","currency":"EUR","amount":1200}`), want: grant.ErrNotCovered},
				{e: ok, left: 0},
			},
		},
		{
			name: "expired",
			g:    refundTemplate(), rec: record(5),
			uses: []use{{e: ok, at: 59 * time.Minute, left: 4}, {e: ok, at: time.Hour, want: grant.ErrExpired}},
		},
		{
			name: "exact grant for user A used for user B",
			g:    grant.Exact(digest(t, ok)), rec: record(1),
			uses: []use{{e: with(ok, func(e *canon.Effect) { e.Principal.User = "user:eve" }), want: grant.ErrNotCovered}},
		},
		{
			name: "plan: each step once, in any order",
			g:    plan, rec: record(0),
			uses: []use{
				{e: steps[2], left: 0}, {e: steps[0], left: 0},
				{e: steps[0], want: grant.ErrUsedUp},
				{e: refund(`{"order":"D-01","amount":12}`), want: grant.ErrNotCovered},
				{e: steps[1], left: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := t0
			st := storeAt(&clk)
			id, err := grant.Put(ctx, st, tt.g, tt.rec)
			require.NoError(t, err)
			for i, u := range tt.uses {
				clk = t0.Add(u.at)
				after, err := grant.Use(ctx, st, id, u.e, t0.Add(u.at))
				if u.want != nil {
					assert.ErrorIs(t, err, u.want, "use %d", i)
					continue
				}
				require.NoError(t, err, "use %d", i)
				assert.Equal(t, u.left, after.Remaining, "use %d", i)
			}
		})
	}
}

func TestUseCoverageError(t *testing.T) {
	ctx := context.Background()
	clk := t0
	st := storeAt(&clk)
	id, err := grant.Put(ctx, st, refundTemplate(), record(1))
	require.NoError(t, err)
	_, err = grant.Use(ctx, st, id, refund(`{"order":"A-17","currency":"EUR","amount":120,"iban":"DE00 SECRET"}`), t0)
	var ce *grant.CoverageError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, grant.Coverage{Reason: grant.ReasonUnpinned, Path: "/iban"}, ce.Coverage)
	assert.Equal(t, `grant: effect not covered: argument not pinned at "/iban"`, err.Error())
	assert.NotContains(t, err.Error(), "SECRET")

	_, err = grant.Use(ctx, st, id, effect("issue_credit", `{}`), t0)
	assert.Equal(t, "grant: effect not covered: tool differs", err.Error())
}

func TestUseFailsClosed(t *testing.T) {
	ctx := context.Background()
	ok := refund(`{"order":"A-17","currency":"EUR","amount":120}`)

	clk := t0
	st := storeAt(&clk)
	_, err := grant.Use(ctx, st, "nope", ok, t0)
	assert.ErrorIs(t, err, grant.ErrNotFound)

	// A spec someone stored without this package.
	require.NoError(t, st.PutGrant(ctx, store.Grant{ID: "raw", User: "user:dana", Spec: []byte(`{"kind":"all"}`),
		Remaining: 9, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	_, err = grant.Use(ctx, st, "raw", ok, t0)
	assert.ErrorIs(t, err, grant.ErrInvalidGrant)

	// A plan record without its steps covers nothing.
	spec, err := grant.Plan(digest(t, ok)).Marshal()
	require.NoError(t, err)
	require.NoError(t, st.PutGrant(ctx, store.Grant{ID: "bare-plan", User: "user:dana", Spec: spec,
		Remaining: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	_, err = grant.Use(ctx, st, "bare-plan", ok, t0)
	assert.ErrorIs(t, err, grant.ErrNotFound)

	// A record whose user differs from the effect's, whatever the spec says.
	id, err := grant.Put(ctx, st, grant.Exact(digest(t, ok)), grant.Record{User: "user:eve", Uses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	require.NoError(t, err)
	_, err = grant.Use(ctx, st, id, ok, t0)
	assert.ErrorIs(t, err, grant.ErrNotCovered)

	id, err = grant.Put(ctx, st, refundTemplate(), record(1))
	require.NoError(t, err)
	_, err = grant.Use(ctx, st, id, ok, time.Time{})
	assert.Error(t, err)
	_, err = grant.Use(ctx, st, id, refund(`{"a":1e400}`), t0)
	assert.ErrorIs(t, err, canon.ErrNumber)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = grant.Use(cancelled, st, id, ok, t0)
	assert.ErrorIs(t, err, grant.ErrUnavailable)
	assert.ErrorIs(t, err, context.Canceled)

	require.NoError(t, st.Close())
	_, err = grant.Use(ctx, st, id, ok, t0)
	assert.ErrorIs(t, err, grant.ErrUnavailable)
	assert.ErrorIs(t, err, store.ErrClosed)
}

func TestPutRefuses(t *testing.T) {
	ctx := context.Background()
	d := canon.Sum([]byte("a"))
	tests := []struct {
		name string
		g    grant.Grant
		rec  grant.Record
	}{
		{"invalid grant", grant.Grant{}, record(1)},
		{"no user", grant.Exact(d), grant.Record{Uses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}},
		{"template for another user", refundTemplate(), grant.Record{User: "user:eve", Uses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}},
		{"expiry before creation", grant.Exact(d), grant.Record{User: "user:dana", Uses: 1, CreatedAt: t0, ExpiresAt: t0}},
		{"no creation time", grant.Exact(d), grant.Record{User: "user:dana", Uses: 1, ExpiresAt: t0}},
		{"no uses", grant.Exact(d), record(0)},
		{"plan with uses", grant.Plan(d), record(3)},
		{"id with a slash", grant.Exact(d), grant.Record{ID: "a/b", User: "user:dana", Uses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := t0
			st := storeAt(&clk)
			_, err := grant.Put(ctx, st, tt.g, tt.rec)
			assert.ErrorIs(t, err, grant.ErrInvalidGrant)
		})
	}
	clk := t0
	st := storeAt(&clk)
	r := record(1)
	r.ID = "g1"
	id, err := grant.Put(ctx, st, grant.Exact(d), r)
	require.NoError(t, err)
	assert.Equal(t, "g1", id)
	_, err = grant.Put(ctx, st, grant.Exact(d), r)
	assert.ErrorIs(t, err, store.ErrDuplicate)
}

// TestPlanReplayAttack: a plan stored as one record with three uses lets
// the agent run the first refund three times. Stored by Put, each step has
// its own single use.
func TestPlanReplayAttack(t *testing.T) {
	ctx := context.Background()
	steps := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
		refund(`{"order":"C-88","amount":12}`),
	}
	plan := grant.Plan(digest(t, steps[0]), digest(t, steps[1]), digest(t, steps[2]))

	// Naive: one record, a shared count of three uses.
	clk := t0
	st := storeAt(&clk)
	spec, err := plan.Marshal()
	require.NoError(t, err)
	require.NoError(t, st.PutGrant(ctx, store.Grant{ID: "naive", User: "user:dana", Spec: spec, Remaining: 3,
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	naiveRuns := 0
	for range 3 {
		if cov, err := grant.Covers(plan, steps[0]); err == nil && cov.Covered {
			if _, err := st.UseGrant(ctx, "naive", t0); err == nil {
				naiveRuns++
			}
		}
	}
	assert.Equal(t, 3, naiveRuns, "the naive plan refunds order A-17 three times")

	id, err := grant.Put(ctx, st, plan, record(0))
	require.NoError(t, err)
	runs := 0
	for range 3 {
		if _, err := grant.Use(ctx, st, id, steps[0], t0); err == nil {
			runs++
		} else {
			assert.ErrorIs(t, err, grant.ErrUsedUp)
		}
	}
	assert.Equal(t, 1, runs)
}

// TestUseConcurrent: 64 goroutines on two stores sharing one SQLite file
// race for a grant with 5 uses; exactly 5 win.
func TestUseConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gate.db")
	var replicas []*sqlite.Store
	for range 2 {
		s, err := sqlite.Open(t.Context(), path, &sqlite.Options{Clock: func() time.Time { return t0 }})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		replicas = append(replicas, s)
	}
	id, err := grant.Put(ctx, replicas[0], refundTemplate(), record(5))
	require.NoError(t, err)
	ok := refund(`{"order":"A-17","currency":"EUR","amount":120}`)

	var won, usedUp atomic.Int64
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			_, err := grant.Use(ctx, replicas[i%2], id, ok, t0)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, grant.ErrUsedUp):
				usedUp.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(5), won.Load())
	assert.Equal(t, int64(59), usedUp.Load())
}
