package concurrent

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest/internal/fixture"
)

// event is one successful call of the interleaving test.
type event struct {
	op     string // consume, renew, reclaim, finish, revoke
	id     string
	fence  int64     // the fence the call named (reclaim, finish, renew) or got (consume)
	at     time.Time // the claim's time (consume, reclaim)
	leased time.Time // the lease the call set (consume, reclaim, renew)
}

// testInterleavings races random sequences of Consume, Renew, Reclaim,
// Finish and revocation from many goroutines over a few tickets, with
// leases that have or have not expired, and then checks what must hold
// whatever the interleaving: each ticket is consumed at most once and
// never both consumed and revoked, finished at most once and only by its
// current fence, its fence counts its reclaims, no lease a reclaim took
// over was live (so two owners never held a live lease at once), and the
// chain has exactly one row per successful decision.
func testInterleavings(t *testing.T, newStore func(*testing.T) store.Store, n int) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			s := newStore(t)
			var ids []string
			for k := 0; k < 4; k++ {
				ids = append(ids, fixture.ParkApproved(t, s, k).ID)
			}
			rowsBefore := len(fixture.Chain(t, s))
			base := fixture.Now(t, s)
			jitter := func(r *rand.Rand, span time.Duration) time.Duration {
				return time.Duration(r.Int64N(int64(2*span))) - span
			}
			var (
				mu     sync.Mutex
				events []event
			)
			ok := func(e event) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
			errs := fixture.Race(n, func(g int) error {
				r := rand.New(rand.NewPCG(seed, uint64(g)))
				owner := fmt.Sprintf("gate-%d", g)
				// held is this gate's lease on each ticket it took; it renews
				// only its own leases and only forwards, as a gate does.
				type lease struct {
					fence int64
					until time.Time
				}
				held := map[string]lease{}
				for step := 0; step < 12; step++ {
					id := ids[r.IntN(len(ids))]
					cur, err := s.Get(t.Context(), id)
					if err != nil {
						return err
					}
					fence := cur.Fence + int64(r.IntN(2)) - int64(r.IntN(2)) // sometimes stale or ahead
					at := base.Add(jitter(r, time.Second))
					until := at.Add(time.Millisecond + time.Duration(r.Int64N(int64(1500*time.Millisecond))))
					switch r.IntN(5) {
					case 0:
						a, err := s.Consume(t.Context(), id, store.Claim{Key: "k-" + owner, Owner: owner, At: at, LeaseUntil: until}, fixture.Note("consume"))
						if err == nil {
							held[id] = lease{a.Fence, until}
							ok(event{op: "consume", id: id, fence: a.Fence, at: at, leased: until})
						}
					case 1:
						h, mine := held[id]
						if !mine {
							continue
						}
						h.until = h.until.Add(time.Duration(r.Int64N(int64(time.Second))))
						if err := s.Renew(t.Context(), id, owner, h.fence, h.until); err == nil {
							held[id] = h
							ok(event{op: "renew", id: id, fence: h.fence, leased: h.until})
						}
					case 2:
						a, err := s.Reclaim(t.Context(), id, fence, store.Claim{Owner: owner, At: at, LeaseUntil: until}, fixture.Note("reclaim"))
						if err == nil {
							held[id] = lease{a.Fence, until}
							ok(event{op: "reclaim", id: id, fence: fence, at: at, leased: until})
						}
					case 3:
						if _, err := s.Finish(t.Context(), id, fence, store.Outcome{State: store.Done, Result: []byte(fmt.Sprint(fence)), At: at}, fixture.Note("finish")); err == nil {
							ok(event{op: "finish", id: id, fence: fence})
						}
					case 4:
						if _, err := s.Resolve(t.Context(), id, store.Resolution{To: store.Revoked, At: at}, fixture.Note("revoke")); err == nil {
							ok(event{op: "revoke", id: id})
						}
					}
				}
				return nil
			})
			for _, err := range errs {
				require.NoError(t, err)
			}
			decisions := 0
			for _, id := range ids {
				var mine []event
				count := map[string]int{}
				for _, e := range events {
					if e.id == id {
						mine = append(mine, e)
						count[e.op]++
						if e.op != "renew" {
							decisions++
						}
					}
				}
				a, err := s.Get(t.Context(), id)
				require.NoError(t, err)
				assert.LessOrEqual(t, count["consume"], 1, "consumed at most once")
				assert.LessOrEqual(t, count["consume"]+count["revoke"], 1, "never both consumed and revoked")
				assert.LessOrEqual(t, count["finish"], 1, "finished at most once")
				switch a.State {
				case store.Approved:
					assert.Zero(t, count["consume"]+count["revoke"])
				case store.Revoked:
					assert.Equal(t, 1, count["revoke"])
				case store.Executing, store.Done:
					assert.Equal(t, 1, count["consume"])
					assert.Equal(t, int64(1+count["reclaim"]), a.Fence, "the fence counts the reclaims")
					if a.State == store.Done {
						assert.Equal(t, 1, count["finish"])
						assert.Equal(t, fmt.Sprint(a.Fence), string(a.Result), "only the current fence finishes")
					}
				default:
					t.Errorf("ticket %s ended %s", id, a.State)
				}
				// Every lease set under a fence (by the consume or reclaim that
				// made it, and by its owner's renewals, which only extend it)
				// had ended when the next fence took over: two owners never
				// held a live lease at once.
				for _, take := range mine {
					if take.op != "reclaim" {
						continue
					}
					for _, e := range mine {
						underFence := (e.op == "consume" && take.fence == 1) ||
							(e.op == "reclaim" && e.fence+1 == take.fence) ||
							(e.op == "renew" && e.fence == take.fence)
						if underFence {
							assert.False(t, e.leased.After(take.at), "a reclaim from fence %d took over a live lease (%s)", take.fence, e.op)
						}
					}
				}
			}
			assert.Len(t, fixture.Chain(t, s), rowsBefore+decisions, "one row per successful decision, none for refusals")
		})
	}
}
