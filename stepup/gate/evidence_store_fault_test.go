package gate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// flakyStore is a store whose reads fail once, on demand: armed with n,
// its n-th read from then on fails with a plain error (a dropped
// connection, a PostgreSQL restart), and every other read and every
// write goes through. A Consume disarms it: only the evidence path,
// before the approval is spent, is faulted.
type flakyStore struct {
	*memory.Store
	mu     sync.Mutex
	armed  bool
	fail   int // the read to fail, counted from 1 since arming
	reads  int // reads since arming
	failed []string
}

var errFlaky = errors.New("connection reset by peer")

// arm makes the n-th read from now fail once (0: count only).
func (f *flakyStore) arm(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.fail, f.reads, f.failed = true, n, 0, nil
}

func (f *flakyStore) disarm() (reads int, failed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	return f.reads, f.failed
}

func (f *flakyStore) read(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		return nil
	}
	f.reads++
	if f.reads == f.fail {
		f.failed = append(f.failed, op)
		return fmt.Errorf("%s: %w", op, errFlaky)
	}
	return nil
}

func (f *flakyStore) Now(ctx context.Context) (time.Time, error) {
	if err := f.read("now"); err != nil {
		return time.Time{}, err
	}
	return f.Store.Now(ctx)
}

func (f *flakyStore) Get(ctx context.Context, id string) (store.Approval, error) {
	if err := f.read("get"); err != nil {
		return store.Approval{}, err
	}
	return f.Store.Get(ctx, id)
}

func (f *flakyStore) GetCredential(ctx context.Context, id []byte) (store.Credential, error) {
	if err := f.read("get credential"); err != nil {
		return store.Credential{}, err
	}
	return f.Store.GetCredential(ctx, id)
}

func (f *flakyStore) CredentialsByUser(ctx context.Context, user string) ([]store.Credential, error) {
	if err := f.read("credentials by user"); err != nil {
		return nil, err
	}
	return f.Store.CredentialsByUser(ctx, user)
}

func (f *flakyStore) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	if err := f.read("get grant"); err != nil {
		return store.Grant{}, err
	}
	return f.Store.GetGrant(ctx, id)
}

func (f *flakyStore) Consume(ctx context.Context, id string, c store.Claim, note store.Note) (store.Approval, error) {
	f.mu.Lock()
	f.armed = false
	f.mu.Unlock()
	return f.Store.Consume(ctx, id, c, note)
}

// flakyWorld is a gate whose store and passkey approver read through a
// flakyStore: mail needs its user, refunds two of the finance group.
type flakyWorld struct {
	st    *flakyStore
	gate  *gate.Gate
	exec  *recorder
	clock *stepuptest.Clock
	auth  map[string]*stepuptest.Authenticator
}

func newFlakyWorld(t *testing.T, wrap ...func(plug.Approver) plug.Approver) *flakyWorld {
	t.Helper()
	ctx := context.Background()
	clock := stepuptest.NewClock(stepuptest.Start())
	st := &flakyStore{Store: stepuptest.Memory(clock)}
	cat, err := policy.NewCatalog("v1", policy.RequireQuorum(card.ClassIrreversible, 2,
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible, Approvers: "finance"},
		policy.Tool{Name: "send_email", Class: card.ClassExternal})...)
	require.NoError(t, err)
	rec := &recorder{}
	// Faults are for the path before the call runs: its outcome's record
	// is another matter.
	exec := plug.ExecutorFunc(func(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
		st.disarm()
		return rec.Execute(ctx, e, key)
	})
	var approver plug.Approver = stepuptest.Passkeys(st)
	for _, f := range wrap {
		approver = f(approver)
	}
	g, err := gate.New(st, cat, approver, gate.WithLocalClock(clock.Now), gate.WithDwell(0),
		gate.WithApproverGroup("finance", stepuptest.Approver, "user:erin"),
		gate.WithExecutor("send_email", exec), gate.WithExecutor("issue_refund", exec))
	require.NoError(t, err)
	enr, err := passkey.NewEnrollment(st.Store, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	w := &flakyWorld{st: st, gate: g, exec: rec, clock: clock, auth: map[string]*stepuptest.Authenticator{}}
	for _, u := range []string{stepuptest.Approver, "user:erin"} {
		w.auth[u], err = stepuptest.Enroll(ctx, enr, u)
		require.NoError(t, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return w
}

// approved proposes c and has approvers approve it.
func (w *flakyWorld) approved(t *testing.T, c stepup.Call, approvers ...string) stepup.TicketID {
	t.Helper()
	ctx := context.Background()
	tk, err := w.gate.Propose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
	for _, u := range approvers {
		_, err = stepuptest.Approve(ctx, w.gate.Desk(), w.auth[u], tk.ID)
		require.NoError(t, err)
	}
	return tk.ID
}

func (w *flakyWorld) rows(t *testing.T) []receipt.AuditRecord {
	t.Helper()
	rows, err := w.st.Store.AuditRange(context.Background(), time.Time{}, stepupFar)
	require.NoError(t, err)
	return rows
}

// TestTransientStoreFailureOnTheEvidencePathIsAStoreError: whichever read
// of the evidence path fails once while a ticket is about to run (the
// ticket, the store's clock, the approver's credential, for one approver
// or each of a quorum), Execute fails with a retryable store error and
// nothing else: not a forgery (ErrBadAssertion), no "not_run" row that
// says the evidence does not verify, nothing spent; and the retry runs
// the call, once. The generator is every read the path makes, each
// failed in turn.
func TestTransientStoreFailureOnTheEvidencePathIsAStoreError(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		call      stepup.Call
		approvers []string
	}{
		{"one approver", sendEmail("finance@example.com"), []string{stepuptest.Approver}},
		{"quorum of two", refundCall(), []string{stepuptest.Approver, "user:erin"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A dry run counts the reads of the path.
			w := newFlakyWorld(t)
			id := w.approved(t, tc.call, tc.approvers...)
			w.st.arm(0)
			_, err := w.gate.Execute(ctx, id)
			require.NoError(t, err)
			reads, _ := w.st.disarm()
			require.Positive(t, reads)
			require.Equal(t, 1, w.exec.Count())

			for n := 1; n <= reads; n++ {
				t.Run(fmt.Sprintf("read %d", n), func(t *testing.T) {
					w := newFlakyWorld(t)
					id := w.approved(t, tc.call, tc.approvers...)
					before := len(w.rows(t))
					w.st.arm(n)
					_, err := w.gate.Execute(ctx, id)
					_, failed := w.st.disarm()
					require.Len(t, failed, 1, "the read failed")
					require.Error(t, err, "read %s failed", failed[0])
					assert.ErrorIs(t, err, stepup.ErrStore, failed[0])
					for _, other := range []error{stepup.ErrBadAssertion, stepup.ErrConsumed, stepup.ErrNotApproved,
						stepup.ErrPolicyChanged, stepup.ErrEffectChanged, stepup.ErrRevoked, stepup.ErrOutcomeUnknown} {
						assert.NotErrorIs(t, err, other, "read %s failed: %v", failed[0], err)
					}
					for _, r := range w.rows(t)[before:] {
						assert.NotContains(t, r.Reason, "does not verify", "read %s failed", failed[0])
						assert.NotEqual(t, receipt.DecisionNotRun, r.Decision, "read %s failed: %s", failed[0], r.Reason)
					}
					assert.Len(t, w.rows(t), before, "a store failure decides nothing")
					assert.Zero(t, w.exec.Count())

					res, err := w.gate.Execute(ctx, id)
					require.NoError(t, err, "the retry runs")
					assert.Equal(t, id, res.Ticket)
					assert.Equal(t, 1, w.exec.Count())
				})
			}
		})
	}
}

// naiveRecheck is an approver that takes every Recheck error for bad
// evidence, as this gate did before: a failed read becomes a forgery.
type naiveRecheck struct{ plug.Approver }

func (n naiveRecheck) Recheck(ctx context.Context, a plug.Answer) error {
	err := n.Approver.Recheck(ctx, a)
	if err != nil && !errors.Is(err, stepup.ErrBadAssertion) {
		return fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
	}
	return err
}

// TestTransientStoreFailureBitesAGateThatTakesItForForgery: the same
// faults, read through an approver that wraps every Recheck error as bad
// evidence (the class this gate had), give an error that matches both
// sentinels: the check above bites.
func TestTransientStoreFailureBitesAGateThatTakesItForForgery(t *testing.T) {
	ctx := context.Background()
	forged := 0
	for n := 1; n <= 12; n++ {
		w := newFlakyWorld(t, func(a plug.Approver) plug.Approver { return naiveRecheck{a} })
		id := w.approved(t, sendEmail("finance@example.com"), stepuptest.Approver)
		w.st.arm(n)
		_, err := w.gate.Execute(ctx, id)
		w.st.disarm()
		if errors.Is(err, stepup.ErrStore) && errors.Is(err, stepup.ErrBadAssertion) {
			forged++
		}
	}
	assert.Positive(t, forged, "a failed credential read reads as a forgery")
}

// TestTransientStoreFailureDuringRecoverAbandonsNothing: a reclaimed
// execution whose evidence cannot be read for a moment is not abandoned
// as "approval evidence does not verify": it is run by a later Recover,
// with its key.
func TestTransientStoreFailureDuringRecoverAbandonsNothing(t *testing.T) {
	ctx := context.Background()
	lease := gate.DefaultLease
	for n := 1; ; n++ {
		w := newFlakyWorld(t)
		id := w.approved(t, sendEmail("finance@example.com"), stepuptest.Approver)
		// Spend the approval as a gate that died before running it would.
		_, err := w.st.Store.Consume(ctx, string(id), store.Claim{Key: "k-1", Owner: "gate:dead", At: w.clock.Now(),
			LeaseUntil: w.clock.Now().Add(time.Second)}, nil)
		require.NoError(t, err)
		// takeOver is one Recover that may take the run over: the first
		// sighting of an expired lease only starts its watch.
		takeOver := func() error {
			w.clock.Advance(2 * lease)
			_, _ = w.gate.Recover(ctx)
			w.clock.Advance(2 * lease)
			_, err := w.gate.Recover(ctx)
			return err
		}
		w.clock.Advance(2 * lease)
		_, _ = w.gate.Recover(ctx)
		w.clock.Advance(2 * lease)
		w.st.arm(n)
		_, rerr := w.gate.Recover(ctx)
		_, failed := w.st.disarm()
		a, err := w.st.Store.Get(ctx, string(id))
		require.NoError(t, err)
		require.NotEqual(t, store.Abandoned, a.State, "read %d (%v) failed: %v", n, failed, rerr)
		if len(failed) == 0 {
			require.Equal(t, store.Done, a.State)
			return // every read of Recover was failed once, in turn
		}
		for i := 0; i < 3 && w.exec.Count() == 0; i++ {
			_ = takeOver()
		}
		assert.Equal(t, 1, w.exec.Count(), "read %d (%v) failed: %v", n, failed, rerr)
		for _, r := range w.rows(t) {
			assert.NotEqual(t, receipt.DecisionAbandoned, r.Decision, r.Reason)
		}
	}
}
