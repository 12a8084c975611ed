package gate_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// rotationWorld is a store shared by replicas, each reading its own copy
// of the key ring (as each replica reads its own key file): the ring MACs
// the gate's approvals and seals the passkeys it enrolls.
type rotationWorld struct {
	st       *memory.Store
	clock    *stepuptest.Clock
	replicas []*replica
	runs     atomic.Int64
	dana     *stepuptest.Authenticator
}

type replica struct {
	keys   *keyring.Live
	gate   *gate.Gate
	enroll *passkey.Enrollment
}

var rotationKey0 = bytes.Repeat([]byte{0xa0}, 32)

func newRotationWorld(t *testing.T, n int) *rotationWorld {
	t.Helper()
	w := &rotationWorld{clock: stepuptest.NewClock(stepuptest.Start())}
	w.st = memory.New(&memory.Options{Clock: w.clock.Now})
	t.Cleanup(func() { _ = w.st.Close() })
	for i := range n {
		r, err := keyring.Single(rotationKey0)
		require.NoError(t, err)
		rep := &replica{keys: keyring.NewLive(r)}
		approver, err := passkey.New(w.st, stepuptest.RP(), passkey.RequireSealKeyRing(rep.keys, w.st))
		require.NoError(t, err)
		send := plug.ExecutorFunc(func(context.Context, canon.Effect, string) ([]byte, error) {
			w.runs.Add(1)
			return []byte(`{}`), nil
		})
		rep.gate, err = gate.New(w.st, stepuptest.SeedCatalog(), approver,
			gate.WithKeyRing(rep.keys), gate.WithLocalClock(w.clock.Now), gate.WithDwell(0),
			gate.WithoutFloodControlUnsafe(), gate.WithInstance(fmt.Sprintf("replica-%d", i)),
			gate.WithExecutor("send_email", send), gate.WithExecutor("search_tickets", send))
		require.NoError(t, err)
		rep.enroll, err = passkey.NewEnrollment(w.st, stepuptest.RP(), passkey.WithClock(w.clock.Now),
			passkey.WithSealKeyRing(rep.keys))
		require.NoError(t, err)
		w.replicas = append(w.replicas, rep)
	}
	var err error
	w.dana, err = stepuptest.Enroll(context.Background(), w.replicas[0].enroll, stepuptest.Approver)
	require.NoError(t, err)
	return w
}

// call is the i-th call of the load: an allowed read (the gate's own
// MAC) or an e-mail a person approves (the gate's MAC on the sealed
// answer, and the passkey's seal).
func call(i int) stepup.Call {
	c := stepup.Call{Session: fmt.Sprintf("s-%d", i), Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}}
	if i%2 == 0 {
		c.Tool, c.Args = "search_tickets", json.RawMessage(fmt.Sprintf(`{"query":"q-%d"}`, i))
	} else {
		c.Tool, c.Args = "send_email", json.RawMessage(fmt.Sprintf(`{"to":"r%d@example.com","subject":"s"}`, i))
	}
	return c
}

// inFlight proposes call i on replica p and approves it there if it needs
// a person: an approval waiting to be executed.
func (w *rotationWorld) inFlight(t *testing.T, p, i int) stepup.TicketID {
	t.Helper()
	id, err := w.tryInFlight(p, i, w.dana)
	require.NoError(t, err)
	return id
}

// tryInFlight is inFlight approving with authenticator a, for goroutines
// other than the test's.
func (w *rotationWorld) tryInFlight(p, i int, a *stepuptest.Authenticator) (stepup.TicketID, error) {
	ctx := context.Background()
	g := w.replicas[p].gate
	tk, err := g.Propose(ctx, call(i))
	if err != nil {
		return "", err
	}
	if tk.Status == stepup.StatusPending {
		if tk, err = stepuptest.Approve(ctx, g.Desk(), a, tk.ID); err != nil {
			return "", fmt.Errorf("approve on replica %d: %w", p, err)
		}
	}
	if tk.Status != stepup.StatusAllowed && tk.Status != stepup.StatusApproved {
		return "", fmt.Errorf("ticket %s is %s: %s", tk.ID, tk.Status, tk.Reason)
	}
	return tk.ID, nil
}

// each applies f to every replica's ring, one replica at a time.
func (w *rotationWorld) each(t *testing.T, f func(r *keyring.Ring) (*keyring.Ring, error)) {
	t.Helper()
	for _, rep := range w.replicas {
		r, err := f(rep.keys.Ring())
		require.NoError(t, err)
		rep.keys.Set(r)
	}
}

// TestRotationUnderLoad rotates the gate key of two replicas on one store,
// one replica at a time in the documented order (add the new key as
// verify-only everywhere, make it current everywhere, retire the old one
// with a grace), while approvals are made on one replica and executed on
// the other, concurrently. Every approval made before, during and after
// the rotation executes once: 0 lost or refused for the rotation. The
// passkey enrolled under the old key keeps approving during the grace.
func TestRotationUnderLoad(t *testing.T) {
	w := newRotationWorld(t, 2)
	ctx := context.Background()
	var (
		mu      sync.Mutex
		pending []stepup.TicketID
		next    atomic.Int64
	)
	for i := range 20 {
		pending = append(pending, w.inFlight(t, i%2, int(next.Add(1))))
	}
	key1 := bytes.Repeat([]byte{0xb1}, 32)
	id1 := keyring.DefaultID(key1)
	steps := []func(){
		func() { // add, one replica at a time
			for _, rep := range w.replicas {
				r, _, err := rep.keys.Ring().Add(key1)
				require.NoError(t, err)
				rep.keys.Set(r)
			}
		},
		func() { // promote, one replica at a time
			for _, rep := range w.replicas {
				r, err := rep.keys.Ring().Promote(id1, w.clock.Now(), time.Hour)
				require.NoError(t, err)
				rep.keys.Set(r)
			}
		},
	}
	var refused, lost atomic.Int64
	// One passkey per load goroutine (all Dana's, enrolled under the old
	// key): one authenticator signing two answers at once would be a
	// clone, refused for its counter.
	var auths []*stepuptest.Authenticator
	for range 2 {
		a, err := stepuptest.Enroll(ctx, w.replicas[1].enroll, stepuptest.Approver)
		require.NoError(t, err)
		auths = append(auths, a)
	}
	load := func(stop <-chan struct{}, seed uint64, auth *stepuptest.Authenticator) {
		rng := rand.New(rand.NewPCG(seed, 7))
		for {
			select {
			case <-stop:
				return
			default:
			}
			i := int(next.Add(1))
			from := rng.IntN(2)
			id, err := w.tryInFlight(from, i, auth)
			if err != nil {
				lost.Add(1)
				t.Errorf("approval %d on replica %d: %v", i, from, err)
				continue
			}
			mu.Lock()
			pending = append(pending, id)
			var run stepup.TicketID
			if len(pending) > 4 {
				j := rng.IntN(len(pending))
				run = pending[j]
				pending = append(pending[:j], pending[j+1:]...)
			}
			mu.Unlock()
			if run != "" {
				if _, err := w.replicas[1-from].gate.Execute(ctx, run); err != nil {
					refused.Add(1)
					t.Errorf("execute %s on replica %d: %v", run, 1-from, err)
				}
			}
		}
	}
	for _, step := range append(steps, func() {}) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Go(func() { load(stop, uint64(g), auths[g]) })
		}
		for range 25 { // let the load run a while against this step's rings
			id := w.inFlight(t, 0, int(next.Add(1)))
			mu.Lock()
			pending = append(pending, id)
			mu.Unlock()
		}
		step()
		close(stop)
		wg.Wait()
	}
	// The rest of the approvals, some of them MACed under the old key, run
	// during the grace on either replica.
	w.clock.Advance(5 * time.Minute)
	for k, id := range pending {
		_, err := w.replicas[k%2].gate.Execute(ctx, id)
		if err != nil {
			refused.Add(1)
		}
		require.NoError(t, err, "0 approvals refused for the rotation")
	}
	assert.Zero(t, refused.Load(), "approvals refused")
	assert.Zero(t, lost.Load(), "approvals lost")
	assert.Equal(t, int64(next.Load()), w.runs.Load(), "every approval made ran, once")
	t.Logf("%d approvals made across the rotation, %d ran, %d refused, %d lost", next.Load(), w.runs.Load(), refused.Load(), lost.Load())
	for _, rep := range w.replicas {
		assert.Equal(t, id1, rep.keys.Ring().Current().ID)
	}
	// Dana's passkey was sealed under the old key: it still approves in
	// the grace, on both replicas.
	w.inFlight(t, 0, int(next.Add(1)))
	w.inFlight(t, 1, int(next.Add(1)))
}

// TestRetiredKeyAcceptsNothingAfterGrace draws graces and execution
// instants around the grace's end: an approval MACed under the old key
// runs exactly when it is executed before the grace ends (by the store's
// clock) and is refused, as bad evidence naming the retired key, from
// then on; a passkey sealed under the old key approves nothing after the
// grace either.
func TestRetiredKeyAcceptsNothingAfterGrace(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 7))
	for run := range 12 {
		grace := time.Duration(rng.IntN(600)) * time.Second
		at := grace + time.Duration(rng.IntN(5)-2)*time.Second
		if run%3 == 0 {
			at = grace // the boundary itself
		}
		if at < 0 {
			at = 0
		}
		t.Run(fmt.Sprintf("grace %v at %v", grace, at), func(t *testing.T) {
			w := newRotationWorld(t, 1)
			ctx := context.Background()
			allowed := w.inFlight(t, 0, 0)
			approved := w.inFlight(t, 0, 1)
			old := w.replicas[0].keys.Ring().Current().ID
			w.each(t, func(r *keyring.Ring) (*keyring.Ring, error) {
				r, _, err := r.Rotate(bytes.Repeat([]byte{0xc2}, 32), w.clock.Now(), grace)
				return r, err
			})
			w.clock.Advance(at)
			g := w.replicas[0].gate
			for _, id := range []stepup.TicketID{allowed, approved} {
				_, err := g.Execute(ctx, id)
				if at < grace {
					require.NoError(t, err)
					continue
				}
				require.ErrorIs(t, err, stepup.ErrBadAssertion)
				assert.Contains(t, err.Error(), old)
			}
			tk, err := g.Propose(ctx, call(3))
			require.NoError(t, err)
			_, err = stepuptest.Approve(ctx, g.Desk(), w.dana, tk.ID)
			if at < grace {
				require.NoError(t, err, "the old passkey approves during the grace")
			} else {
				require.Error(t, err, "the old passkey approves nothing after the grace")
			}
		})
	}
}

// TestRotationOutOfOrderRefuses bites: a replica that makes the new key
// current before the other holds it has its approvals refused on the
// other replica, which is why a rotation adds the key everywhere first.
func TestRotationOutOfOrderRefuses(t *testing.T) {
	w := newRotationWorld(t, 2)
	ctx := context.Background()
	r, _, err := w.replicas[0].keys.Ring().Rotate(bytes.Repeat([]byte{0xd3}, 32), w.clock.Now(), time.Hour)
	require.NoError(t, err)
	w.replicas[0].keys.Set(r)
	id := w.inFlight(t, 0, 0)
	_, err = w.replicas[1].gate.Execute(ctx, id)
	require.ErrorIs(t, err, stepup.ErrBadAssertion)
	require.ErrorIs(t, err, keyring.ErrUnknownKey)
}

// TestNaiveKeyReplacementVoidsApprovals bites: replacing the gate's one
// key (gate.WithKey) and the seal key with a new one, as rotation had to
// be done before key rings, voids every approval in flight and every
// enrolled passkey, which is what the rings above prevent.
func TestNaiveKeyReplacementVoidsApprovals(t *testing.T) {
	w := newRotationWorld(t, 1)
	ctx := context.Background()
	var ids []stepup.TicketID
	for i := range 6 {
		ids = append(ids, w.inFlight(t, 0, i))
	}
	key1 := bytes.Repeat([]byte{0xe4}, 32)
	approver, err := passkey.New(w.st, stepuptest.RP(), passkey.RequireSeal(key1))
	require.NoError(t, err)
	g, err := gate.New(w.st, stepuptest.SeedCatalog(), approver, gate.WithKey(key1), gate.WithLocalClock(w.clock.Now),
		gate.WithDwell(0), gate.WithoutFloodControlUnsafe(), gate.WithExecutor("send_email", plug.ExecutorFunc(
			func(context.Context, canon.Effect, string) ([]byte, error) { return nil, nil })),
		gate.WithExecutor("search_tickets", plug.ExecutorFunc(
			func(context.Context, canon.Effect, string) ([]byte, error) { return nil, nil })))
	require.NoError(t, err)
	voided := 0
	for _, id := range ids {
		if _, err := g.Execute(ctx, id); err != nil {
			require.ErrorIs(t, err, stepup.ErrBadAssertion)
			voided++
		}
	}
	assert.Equal(t, len(ids), voided, "every approval in flight is voided")
	tk, err := g.Propose(ctx, call(7))
	require.NoError(t, err)
	_, err = stepuptest.Approve(ctx, g.Desk(), w.dana, tk.ID)
	require.Error(t, err, "the enrolled passkey no longer approves")
}

// legacySeal is the gate's own approval evidence as gates wrote it before
// key ids: {"gate_mac": hex}, the MAC as documented on the gate's MAC
// (HMAC-SHA256 under key of the tag, the length-prefixed id, approver and
// policy version, digest, nonce, card hash and expiry).
func legacySeal(key []byte, a store.Approval) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("asu/v1/gate-approval\x00"))
	for _, s := range []string{a.ID, a.Approver, a.PolicyVersion} {
		m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(s))))
		m.Write([]byte(s))
	}
	m.Write(a.Digest[:])
	m.Write(a.Nonce[:])
	m.Write(a.CardHash[:])
	m.Write(binary.BigEndian.AppendUint64(nil, uint64(a.ExpiresAt.Unix())))
	return []byte(`{"gate_mac":"` + hex.EncodeToString(m.Sum(nil)) + `"}`)
}

// TestApprovalsStoredBeforeKeyIDsKeepRunning: an allowed call stored by a
// gate from before key ids (its evidence names no key) runs on a gate
// with the ring, before a rotation and during its grace, and not after.
func TestApprovalsStoredBeforeKeyIDsKeepRunning(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		rotate bool
		after  time.Duration
		runs   bool
	}{
		{"no rotation", false, 0, true},
		{"in grace", true, 2*time.Minute - time.Second, true},
		{"after grace", true, 2 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRotationWorld(t, 1)
			g := w.replicas[0].gate
			real := w.inFlight(t, 0, 0) // an allowed call, as this gate stores it
			row, err := w.st.Get(ctx, string(real))
			require.NoError(t, err)
			old := row
			old.ID = store.NewID()
			_, err = crand.Read(old.Nonce[:])
			require.NoError(t, err)
			old.Evidence = legacySeal(rotationKey0, old)
			old.IdempotencyKey, old.Fence = "", 0
			_, _, err = w.st.Park(ctx, old, store.Caps{}, func(a store.Approval, _ bool) receipt.AuditRecord {
				return receipt.AuditRecord{TicketID: a.ID, Decision: receipt.DecisionAllow, Tool: a.Tool, ArgsDigest: a.Digest,
					Time: a.CreatedAt.UnixMilli(), PolicyVersion: a.PolicyVersion, Approver: a.Approver}
			})
			require.NoError(t, err)
			if tc.rotate {
				w.each(t, func(r *keyring.Ring) (*keyring.Ring, error) {
					r, _, err := r.Rotate(bytes.Repeat([]byte{0xf5}, 32), w.clock.Now(), 2*time.Minute)
					return r, err
				})
			}
			w.clock.Advance(tc.after)
			_, err = g.Execute(ctx, stepup.TicketID(old.ID))
			if tc.runs {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, stepup.ErrBadAssertion)
		})
	}
}
