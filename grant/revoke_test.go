package grant_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

// grantStores opens each store backend the grant tests run on, its clock
// reading *now.
func grantStores(t *testing.T, now *time.Time) map[string]store.Store {
	t.Helper()
	clock := func() time.Time { return *now }
	sq, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "gate.db"), &sqlite.Options{Clock: clock})
	require.NoError(t, err)
	mem := storeAt(now)
	t.Cleanup(func() { _ = sq.Close(); _ = mem.Close() })
	return map[string]store.Store{"memory": mem, "sqlite": sq}
}

func noteRevoked(store.Approval, bool) audit.Record {
	return audit.Record{TicketID: "g", Task: "grant", Session: "grant:user:dana", Decision: audit.DecisionRevoked,
		Reason: "revoked", Approver: "user:dana"}
}

// grantKind is a grant and the calls it covers, each of which a live grant
// lets run.
type grantKind struct {
	name  string
	g     grant.Grant
	uses  int
	calls []canon.Effect
}

func grantKinds(t *testing.T) []grantKind {
	ok := refund(`{"order":"A-17","currency":"EUR","amount":120}`)
	steps := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
		refund(`{"order":"C-88","amount":12}`),
	}
	return []grantKind{
		{"exact", grant.Exact(digest(t, ok)), 3, []canon.Effect{ok}},
		{"template", refundTemplate(), 3, []canon.Effect{ok}},
		{"plan", grant.Plan(digest(t, steps[0]), digest(t, steps[1]), digest(t, steps[2])), 0, steps},
	}
}

// entryPoint is one way a call is granted: its answer is nil when the call
// may run, and the use was taken.
type entryPoint struct {
	name string
	use  func(ctx context.Context, st store.Store, id string, e canon.Effect, now time.Time) error
}

var entryPoints = []entryPoint{
	{"Use", func(ctx context.Context, st store.Store, id string, e canon.Effect, now time.Time) error {
		_, err := grant.Use(ctx, st, id, e, now)
		return err
	}},
	// Target, then the store's own use of the record it names, as a gate
	// that parks the call and takes the use in one transaction does.
	{"Target+UseGrant", func(ctx context.Context, st store.Store, id string, e canon.Effect, now time.Time) error {
		s, err := canon.Seal(e)
		if err != nil {
			return err
		}
		target, err := grant.Target(ctx, st, id, s)
		if err != nil {
			return err
		}
		_, err = st.UseGrant(ctx, target, now)
		return err
	}},
}

// TestRevokedGrantCoversNothing: a grant revoked by the id Put returned
// covers no call, whatever its kind and by whichever entry point, on every
// store, and Target itself refuses it. A plan is stored as a record per
// step beside the plan's own, and revoking the plan marks only the latter:
// its steps must still be refused.
func TestRevokedGrantCoversNothing(t *testing.T) {
	ctx := context.Background()
	for _, k := range grantKinds(t) {
		for _, ep := range entryPoints {
			t.Run(k.name+"/"+ep.name, func(t *testing.T) {
				now := t0
				for name, st := range grantStores(t, &now) {
					r := record(k.uses)
					id, err := grant.Put(ctx, st, k.g, r)
					require.NoError(t, err, name)
					now = t0.Add(time.Minute)
					require.NoError(t, st.RevokeGrant(ctx, id, now, noteRevoked), name)
					for i, e := range k.calls {
						assert.ErrorIs(t, ep.use(ctx, st, id, e, now), grant.ErrRevoked, "%s: call %d", name, i)
						s, err := canon.Seal(e)
						require.NoError(t, err)
						target, err := grant.Target(ctx, st, id, s)
						assert.ErrorIs(t, err, grant.ErrRevoked, "%s: Target of call %d answered %q", name, i, target)
					}
				}
			})
		}
	}
}

// TestExpiredGrantCoversNothing: past its expiry a grant covers no call,
// whatever its kind and by whichever entry point, including a plan whose
// step records say they live longer than the plan's own (records written
// or changed without Put): a step never outlives its plan.
func TestExpiredGrantCoversNothing(t *testing.T) {
	ctx := context.Background()
	for _, k := range grantKinds(t) {
		for _, ep := range entryPoints {
			for _, late := range []time.Duration{time.Hour, time.Hour + time.Second, 30 * 24 * time.Hour} {
				t.Run(fmt.Sprintf("%s/%s/%v", k.name, ep.name, late), func(t *testing.T) {
					now := t0
					for name, st := range grantStores(t, &now) {
						id, err := grant.Put(ctx, st, k.g, record(k.uses))
						require.NoError(t, err, name)
						now = t0.Add(late)
						for i, e := range k.calls {
							assert.ErrorIs(t, ep.use(ctx, st, id, e, now), grant.ErrExpired, "%s: call %d", name, i)
						}
					}
				})
			}
		}
		if k.g.Kind != grant.KindPlan {
			continue
		}
		for _, ep := range entryPoints {
			t.Run(k.name+"/steps-outlive-plan/"+ep.name, func(t *testing.T) {
				now := t0
				for name, st := range grantStores(t, &now) {
					spec, err := k.g.Marshal()
					require.NoError(t, err)
					for _, d := range k.g.Digests {
						step, err := grant.Exact(d).Marshal()
						require.NoError(t, err)
						require.NoError(t, st.PutGrant(ctx, store.Grant{ID: "p/" + d.String(), User: "user:dana", Spec: step,
							Remaining: 1, CreatedAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}), name)
					}
					require.NoError(t, st.PutGrant(ctx, store.Grant{ID: "p", User: "user:dana", Spec: spec,
						CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}), name)
					now = t0.Add(2 * time.Hour)
					for i, e := range k.calls {
						assert.Error(t, ep.use(ctx, st, "p", e, now), "%s: call %d of an expired plan ran", name, i)
					}
				}
			})
		}
	}
}

// revokedDuringUse is a store in which the plan is revoked while a step's
// use is being taken: after Use read the plan, before the step is used.
type revokedDuringUse struct {
	store.Store
	plan string
}

func (s revokedDuringUse) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	if err := s.RevokeGrant(ctx, s.plan, at, noteRevoked); err != nil {
		return store.Grant{}, err
	}
	return s.Store.UseGrant(ctx, id, at)
}

// TestPlanRevokedDuringUseCoversNothing: a revocation that commits between
// Use's read of the plan and the step's use refuses the call: the step's
// record alone would not say so.
func TestPlanRevokedDuringUseCoversNothing(t *testing.T) {
	ctx := context.Background()
	k := grantKinds(t)[2]
	now := t0
	for name, st := range grantStores(t, &now) {
		id, err := grant.Put(ctx, st, k.g, record(0))
		require.NoError(t, err, name)
		_, err = grant.Use(ctx, revokedDuringUse{st, id}, id, k.calls[0], t0)
		assert.ErrorIs(t, err, grant.ErrRevoked, name)
	}
}

// TestRevokedPlanStepRefused: a step's own record revoked (by the store,
// under the step's id) is refused by Target, as it is by the store's use.
func TestRevokedPlanStepRefused(t *testing.T) {
	ctx := context.Background()
	k := grantKinds(t)[2]
	now := t0
	for name, st := range grantStores(t, &now) {
		id, err := grant.Put(ctx, st, k.g, record(0))
		require.NoError(t, err, name)
		require.NoError(t, st.RevokeGrant(ctx, id+"/"+k.g.Digests[1].String(), t0, noteRevoked), name)
		s, err := canon.Seal(k.calls[1])
		require.NoError(t, err)
		_, err = grant.Target(ctx, st, id, s)
		assert.ErrorIs(t, err, grant.ErrRevoked, name)
		_, err = grant.Use(ctx, st, id, k.calls[0], t0)
		assert.NoError(t, err, "%s: the plan's other steps stand", name)
	}
}
