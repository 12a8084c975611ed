package grant_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// planRecordFails is a store in which writing a plan's own record fails
// (a crash, a lost connection) after its steps were written.
type planRecordFails struct{ *memory.Store }

func (s planRecordFails) PutGrant(ctx context.Context, g store.Grant) error {
	if !strings.Contains(g.ID, "/") {
		return errors.New("connection lost")
	}
	return s.Store.PutGrant(ctx, g)
}

// TestPlanStepsOnlyThroughPlan: a plan's steps are used through the
// plan's id only. Were a step's record usable by its own id, the steps of a
// plan whose own record was never written (Put failed after them: "covers
// nothing") would still approve their calls.
func TestPlanStepsOnlyThroughPlan(t *testing.T) {
	ctx := context.Background()
	steps := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
	}
	plan := grant.Plan(digest(t, steps[0]), digest(t, steps[1]))
	stepRecord := func(id string, e canon.Effect) string { return id + "/" + digest(t, e).String() }

	t.Run("HalfWrittenPlan", func(t *testing.T) {
		clk := t0
		st := storeAt(&clk)
		t.Cleanup(func() { _ = st.Close() })
		r := record(0)
		r.ID = "plan-1"
		_, err := grant.Put(ctx, planRecordFails{st}, plan, r)
		require.Error(t, err)
		_, err = st.GetGrant(ctx, stepRecord("plan-1", steps[0]))
		require.NoError(t, err, "the steps were written")

		for _, id := range []string{"plan-1", stepRecord("plan-1", steps[0])} {
			_, err = grant.Use(ctx, st, id, steps[0], t0)
			assert.ErrorIs(t, err, grant.ErrNotFound, id)
		}
	})

	t.Run("WholePlan", func(t *testing.T) {
		clk := t0
		st := storeAt(&clk)
		t.Cleanup(func() { _ = st.Close() })
		id, err := grant.Put(ctx, st, plan, record(0))
		require.NoError(t, err)
		_, err = grant.Use(ctx, st, stepRecord(id, steps[1]), steps[1], t0)
		assert.ErrorIs(t, err, grant.ErrNotFound)
		after, err := grant.Use(ctx, st, id, steps[1], t0)
		require.NoError(t, err)
		assert.Equal(t, 0, after.Remaining)
	})
}

// TestPlanPutRetried: Put of a plan cut short after its steps (a
// crash before the plan's record) is completed by the same Put again, as
// the gate's recovery runs it. A retry that failed on the steps already
// written would leave an approved plan never issued.
func TestPlanPutRetried(t *testing.T) {
	ctx := context.Background()
	steps := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
	}
	plan := grant.Plan(digest(t, steps[0]), digest(t, steps[1]))
	clk := t0
	st := storeAt(&clk)
	t.Cleanup(func() { _ = st.Close() })
	r := record(0)
	r.ID = "plan-1"
	_, err := grant.Put(ctx, planRecordFails{st}, plan, r)
	require.Error(t, err)

	id, err := grant.Put(ctx, st, plan, r)
	require.NoError(t, err)
	for _, e := range steps {
		_, err := grant.Use(ctx, st, id, e, t0)
		require.NoError(t, err)
		_, err = grant.Use(ctx, st, id, e, t0)
		assert.ErrorIs(t, err, grant.ErrUsedUp, "each step still runs once")
	}

	// Another plan under a taken id is still refused.
	other := grant.Plan(digest(t, steps[0]), digest(t, refund(`{"order":"Z-99","amount":1}`)))
	_, err = grant.Put(ctx, st, other, r)
	assert.ErrorIs(t, err, store.ErrDuplicate)
	// So is the same plan for another user, or one whose step was used.
	r2 := r
	r2.User = "user:eve"
	_, err = grant.Put(ctx, st, plan, r2)
	assert.ErrorIs(t, err, store.ErrDuplicate)
}
