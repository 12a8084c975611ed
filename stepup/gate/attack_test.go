package gate_test

// Attacks on the gate from outside, through its public API and the
// store's: what a runtime token holder, an agent process, a database
// writer without keys, or a second enrolled person can do. A test that
// passes documents a property that held; each one tries a class of
// attacks with many spellings, timings or interleavings.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/sqlite"
)

// pendingTicket proposes a call that parks, for user:dana.
func pendingTicket(t *testing.T, w *world, to string) stepup.Ticket {
	t.Helper()
	tk, err := w.Gate.Propose(context.Background(), sendEmail(to))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk
}

// TestRecoverDoesNotTrustTheDatabase has a database writer, holding no
// passkey and not the gate's key, write an approval for a parked call
// straight into the store, spend it itself under a short lease in the
// name of a gate that does not exist, and wait for the lease to expire:
// every live gate's Recover (run continuously by Maintain) then finds an
// execution whose owner is gone. It must not run a call nobody approved.
func TestRecoverDoesNotTrustTheDatabase(t *testing.T) {
	ctx := context.Background()
	for _, donorKind := range []string{"a passkey approval", "a policy allowance"} {
		for _, f := range forgeries() {
			t.Run(donorKind+"/"+f.name, func(t *testing.T) {
				w := newWorld(t)
				donor := donorTicket(t, w, donorKind)
				row, err := w.Store.Get(ctx, string(donor.ID))
				require.NoError(t, err)
				target := pendingTicket(t, w, "finance@exarnple.com")

				now := w.Clock.Now()
				_, err = w.Store.Resolve(ctx, string(target.ID), store.Resolution{To: store.Approved,
					Approver: f.approver(w), Evidence: f.evidence(t, w, row), At: now}, nil)
				require.NoError(t, err)
				_, err = w.Store.Consume(ctx, string(target.ID), store.Claim{Key: "k-forged", Owner: "gate-ghost",
					At: now, LeaseUntil: now.Add(time.Second)}, nil)
				require.NoError(t, err, "the writer's execution is in the database")
				w.Clock.Advance(2 * time.Second)

				before := w.Exec.Count()
				_, _ = w.Gate.Recover(ctx)
				assert.Equal(t, before, w.Exec.Count(), "a call nobody approved ran through Recover")
			})
		}
	}
}

// TestApproverRuleFollowsTheEffectNotTheRow has a database writer
// rewrite the User column of user:dana's parked call to user:erin, a
// second enrolled person: the effect, its digest and card still say the
// call runs for dana. Erin then approves it with her own passkey. The
// approver rule (a ticket is decided by the user it runs on behalf of)
// must be judged on what runs, not on a column the writer controls.
func TestApproverRuleFollowsTheEffectNotTheRow(t *testing.T) {
	ctx := context.Background()
	for _, intruder := range []string{"user:erin", "user:dana2", "user:finance", "user:d"} {
		t.Run(intruder, func(t *testing.T) {
			w := newWorld(t)
			other := w.Enroll(t, intruder)
			tk := pendingTicket(t, w, "finance@exarnple.com")

			row, err := w.Store.Get(ctx, string(tk.ID))
			require.NoError(t, err)
			row.ID = "" // the writer re-parks the row under its own id
			row.User = intruder
			row.Requester.User = intruder
			forged, _, err := w.Store.Park(ctx, row, store.Caps{}, nil)
			require.NoError(t, err)

			eff, err := canon.ParseEffect(forged.Effect)
			require.NoError(t, err)
			require.Equal(t, "user:dana", eff.Principal.User, "what runs is dana's call")

			_, aerr := stepuptest.Approve(ctx, w.Gate.Desk(), other, stepup.TicketID(forged.ID))
			_, eerr := w.Gate.Execute(ctx, stepup.TicketID(forged.ID))
			assert.Error(t, errors.Join(aerr, eerr))
			assert.Zero(t, w.Exec.Count(), "%s approved a call that runs for user:dana", intruder)
		})
	}
}

// TestApprovalRunsOnceEvenIfTheRowIsCopied has a database writer copy a
// genuinely approved ticket into a new row (same effect, nonce, expiry,
// card and evidence; a fresh id), before or after the original ran, by
// parking the copy approved or by parking it pending and resolving it
// with the lifted evidence. One approval must run at most once: the
// copy's evidence is a passkey assertion over the original's challenge.
func TestApprovalRunsOnceEvenIfTheRowIsCopied(t *testing.T) {
	ctx := context.Background()
	for _, when := range []string{"before the original runs", "after the original ran"} {
		for _, how := range []string{"parked approved", "parked pending then resolved"} {
			t.Run(when+"/"+how, func(t *testing.T) {
				w := newWorld(t)
				tk := approved(t, w, sendEmail("finance@example.com"))
				row, err := w.Store.Get(ctx, string(tk.ID))
				require.NoError(t, err)
				if when == "after the original ran" {
					_, err := w.Gate.Execute(ctx, tk.ID)
					require.NoError(t, err)
				}
				cp := row.Clone()
				cp.ID, cp.ShownAt, cp.Votes = "", time.Time{}, nil // parked as a new row
				if how == "parked pending then resolved" {
					cp.State, cp.Approver, cp.Evidence, cp.Reason, cp.ResolvedAt = store.Pending, "", nil, "", time.Time{}
					cp.Session = "sess-copy" // not merged into anything live
				}
				copied, _, err := w.Store.Park(ctx, cp, store.Caps{}, nil)
				require.NoError(t, err)
				if how == "parked pending then resolved" {
					_, err = w.Store.Resolve(ctx, copied.ID, store.Resolution{To: store.Approved, Approver: row.Approver,
						Evidence: row.Evidence, Reason: row.Reason, At: w.Clock.Now()}, nil)
					require.NoError(t, err)
				}
				_, _ = w.Gate.Execute(ctx, stepup.TicketID(copied.ID))
				_, _ = w.Gate.Execute(ctx, tk.ID)
				assert.LessOrEqual(t, w.Exec.Count(), 1, "one approval ran %d times", w.Exec.Count())
			})
		}
	}
}

// spoofsOf returns spellings an attacker would try for principal id:
// case, width, homoglyphs, invisible and control characters, padding,
// other kinds and the gate's reserved names.
func spoofsOf(id string) []string {
	kind, name, _ := strings.Cut(id, ":")
	out := []string{
		strings.ToUpper(kind) + ":" + name, kind + ":" + strings.ToUpper(name),
		strings.ToUpper(kind[:1]) + kind[1:] + ":" + name,
		" " + id, id + " ", id + "\t", id + "\n", id + "\x00", id + "\u200b", "\u200b" + id, id + "\u00ad",
		id + "\u0301", kind + "\uff1a" + name, kind + "::" + name, kind + ": " + name,
		strings.Replace(id, "a", "\u0430", 1), // Cyrillic a
		strings.Replace(id, "e", "\u0435", 1), // Cyrillic e
		strings.Replace(id, "u", "\uff55", 1), // fullwidth u
		strings.Replace(id, "s", "\u017f", 1), // long s, which folds to s
		kind + ":" + name + "/", kind + ":./" + name, kind + ":" + name + "\u0131",
		"agent:" + name, "policy:" + name, "grant:" + name, "gate:" + name, name, kind + ":", ":" + name, "",
	}
	var uniq []string
	seen := map[string]bool{id: true}
	for _, s := range out {
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	return uniq
}

// TestOnlyWhoMayDecideDecides answers tickets in many names through an
// approver that checks nothing (the Approver contract leaves who may
// decide to the gate): the ticket's own user when no group is named,
// the members of the group the policy names otherwise, never the
// requester's agent or delegations, and no look-alike of any of them.
// Each name tries to approve, deny, and revoke an approval.
func TestOnlyWhoMayDecideDecides(t *testing.T) {
	ctx := context.Background()
	requester := canon.Principal{User: "user:dana", Agent: "agent:support", Delegations: []string{"user:erin"}}
	routes := []struct {
		name    string
		group   string
		members []string
		may     []string
	}{
		{"the user decides", "", nil, []string{"user:dana"}},
		{"a group decides", "finance", []string{"user:fin", "user:dana", "user:erin"},
			[]string{"user:fin", "user:dana"}},
	}
	for _, r := range routes {
		var names []string
		for _, id := range []string{"user:dana", "user:fin", "user:erin", "agent:support", "user:mallory"} {
			names = append(names, id)
			names = append(names, spoofsOf(id)...)
		}
		for _, name := range names {
			t.Run(fmt.Sprintf("%s/%q", r.name, name), func(t *testing.T) {
				var opts []gate.Option
				if r.group != "" {
					opts = append(opts, gate.WithApproverGroup(r.group, r.members...))
				}
				h := stepuptest.NewGateWith(t, refundCatalog(t, r.group), namedApprover{name}, opts...)
				call := refund(`{"order":"A-17","amount":120}`)
				call.Principal = requester
				may := contains(r.may, name)

				for _, action := range []string{"approve", "deny", "revoke"} {
					tk, err := h.Gate.Propose(ctx, call)
					require.NoError(t, err)
					require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
					call.Step += "+" // a fresh ticket for the next action
					var derr error
					switch action {
					case "approve":
						_, derr = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
					case "deny":
						_, derr = h.Gate.Desk().Deny(ctx, tk.ID, []byte(`no`), "")
					case "revoke":
						// a real approver approves first, through the passkey path
						legit := stepuptest.NewGateWith(t, refundCatalog(t, r.group), namedApprover{"user:dana"}, opts...)
						ltk, err := legit.Gate.Propose(ctx, call)
						require.NoError(t, err)
						_, err = legit.Gate.Desk().Approve(ctx, ltk.ID, []byte(`yes`))
						require.NoError(t, err)
						g, err := gate.New(legit.Store, refundCatalog(t, r.group), namedApprover{name},
							append(opts, gate.WithoutFloodControlUnsafe())...)
						require.NoError(t, err)
						_, derr = g.Desk().Revoke(ctx, ltk.ID, []byte(`revoke`), "")
						got, err := legit.Gate.Ticket(ctx, ltk.ID)
						require.NoError(t, err)
						if may {
							assert.NoError(t, derr)
							assert.Equal(t, stepup.StatusRevoked, got.Status)
						} else {
							assert.ErrorIs(t, derr, stepup.ErrNotPermitted)
							assert.Equal(t, stepup.StatusApproved, got.Status, "%q revoked an approval", name)
						}
						continue
					}
					got, err := h.Gate.Ticket(ctx, tk.ID)
					require.NoError(t, err)
					if may {
						assert.NoError(t, derr, action)
						assert.NotEqual(t, stepup.StatusPending, got.Status, action)
					} else {
						assert.ErrorIs(t, derr, stepup.ErrNotPermitted, action)
						assert.Equal(t, stepup.StatusPending, got.Status, "%q could %s", name, action)
					}
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLookalikePrincipalsAreRefusedEverywhere proposes calls and mints
// invites for look-alikes of the reference program's principals: none
// is parked, and no look-alike can be enrolled to approve later.
func TestLookalikePrincipalsAreRefusedEverywhere(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	for _, user := range spoofsOf("user:dana") {
		c := sendEmail("finance@example.com")
		c.Principal.User = user
		tk, err := w.Gate.Propose(ctx, c)
		if err == nil {
			assert.Equal(t, stepup.StatusDenied, tk.Status, "user %q", user)
		}
		if !strings.HasPrefix(user, "agent:") {
			_, err = w.Enrollment.Invite(ctx, user)
			assert.Error(t, err, "invite for %q", user)
		}
	}
	for _, id := range append(spoofsOf("agent:reports"), spoofsOf("grant:x")...) {
		if strings.HasPrefix(id, "agent:") || strings.HasPrefix(id, "grant:") || strings.HasPrefix(id, "policy:") {
			continue // refused by prefix; the look-alikes are the attack
		}
		_, err := w.Enrollment.Invite(ctx, id)
		assert.Error(t, err, "invite for %q", id)
	}
	for _, agent := range spoofsOf("agent:reports") {
		c := sendEmail("finance@example.com")
		c.Principal.Agent = agent
		tk, err := w.Gate.Propose(ctx, c)
		if err == nil {
			assert.Equal(t, stepup.StatusDenied, tk.Status, "agent %q", agent)
		}
	}
	page, _, err := w.Store.List(ctx, store.Filter{})
	require.NoError(t, err)
	assert.Empty(t, page, "a look-alike's call was stored")
}

// crashFirstRun is an executor that kills its gate and panics on its
// first run, as a gate process dying inside the tool would, and records
// every run: the keys it was given and whether two runs ever overlapped.
type crashFirstRun struct {
	mu       sync.Mutex
	runs     int
	ok       int
	inFlight int
	overlap  bool
	keys     map[string]bool
	hold     chan struct{} // when set, successful runs wait on it
	kill     func()        // kills the first run's gate (see dying)
}

func (c *crashFirstRun) Execute(ctx context.Context, _ canon.Effect, key string) ([]byte, error) {
	c.mu.Lock()
	c.runs++
	first := c.runs == 1
	if c.keys == nil {
		c.keys = map[string]bool{}
	}
	c.keys[key] = true
	c.inFlight++
	if c.inFlight > 1 {
		c.overlap = true
	}
	hold := c.hold
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	if first {
		c.kill()
		panic("the gate process died inside the tool")
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	c.ok++
	c.mu.Unlock()
	return []byte(`{"ok":true}`), nil
}

// TestCrashedExecutionRunsOnceAcrossTwoSQLiteGates kills a gate (its
// store view, see dying) inside its executor's first run of an allowed
// call, then lets two other gates, each with its own connection pool on
// one SQLite file, race Execute, Recover and the store's clock
// advancing, in many interleavings. The call runs again only once the
// crashed run's lease expired, exactly once more, with the same key,
// never overlapping; the executor's panic stays in the gate, and no
// goroutine is left behind.
func TestCrashedExecutionRunsOnceAcrossTwoSQLiteGates(t *testing.T) {
	const lease = 7 * time.Second
	for trial := range 12 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			ctx := context.Background()
			base := runtime.NumGoroutine()
			path := filepath.Join(t.TempDir(), "asu.db")
			clock := stepuptest.NewClock(stepuptest.Start())
			exec := &crashFirstRun{}
			key := []byte("the key both gates of one store share!")
			var gates []*gate.Gate
			var dbs []*sqlite.Store
			var crashed *gate.Gate // gate A, killed inside its first run
			for i := range 3 {
				db := openSQLiteAt(t, path, clock)
				dbs = append(dbs, db)
				var st store.Gate = db
				if i == 2 {
					d := &dying{Store: db}
					st, exec.kill = d, d.kill
				}
				g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(db),
					gate.WithExecutor("write_draft", exec), gate.WithKey(key), gate.WithLease(lease),
					gate.WithInstance(fmt.Sprintf("gate-%c", 'a'+i)), gate.WithLocalClock(clock.Now))
				require.NoError(t, err)
				if i == 2 {
					crashed = g
					continue
				}
				gates = append(gates, g)
			}
			tk, err := gates[0].Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
				Session: "s", Principal: agentFor("user:dana")})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusAllowed, tk.Status)
			_, err = crashed.Execute(ctx, tk.ID)
			require.ErrorIs(t, err, stepup.ErrOutcomeUnknown, "its gate died inside the executor")
			got, err := gates[1].Ticket(ctx, tk.ID)
			require.NoError(t, err)
			require.Equal(t, stepup.StatusExecuting, got.Status)

			// Before the lease expires, nobody runs it again.
			clock.Advance(lease - store.MaxSkew - time.Second)
			for _, g := range gates {
				_, _ = g.Recover(ctx)
				_, err := g.Execute(ctx, tk.ID)
				assert.ErrorIs(t, err, stepup.ErrConsumed)
			}
			require.Equal(t, 1, exec.runs, "a live lease was taken over")

			// Then everything at once, the clock moving meanwhile.
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g := gates[(i+trial)%2]
					switch (i + trial) % 4 {
					case 0, 1:
						_, _ = g.Recover(ctx)
					case 2:
						_, _ = g.Execute(ctx, tk.ID)
					case 3:
						clock.Advance(time.Duration(trial) * time.Second / 2)
					}
				}()
			}
			wg.Wait()
			clock.Advance(2 * lease)
			for range 2 { // a sighting, then a lease without a renewal
				for _, g := range gates {
					_, _ = g.Recover(ctx)
				}
				clock.Advance(lease)
			}
			exec.mu.Lock()
			assert.Equal(t, 2, exec.runs, "the crashed run and exactly one more")
			assert.Equal(t, 1, exec.ok)
			assert.Len(t, exec.keys, 1, "every run had the ticket's one key")
			assert.False(t, exec.overlap)
			exec.mu.Unlock()
			got, err = gates[1].Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusExecuted, got.Status)
			for _, db := range dbs {
				require.NoError(t, db.Close())
			}
			assertGoroutinesBack(t, base)
		})
	}
}

// blockingExec is an executor whose runs wait until released, counting
// how many are inside it at once.
type blockingExec struct {
	release  chan struct{}
	mu       sync.Mutex
	inFlight int
	most     int
	runs     int
}

func (b *blockingExec) Execute(ctx context.Context, _ canon.Effect, _ string) ([]byte, error) {
	b.mu.Lock()
	b.runs++
	b.inFlight++
	b.most = max(b.most, b.inFlight)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
	}()
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return []byte(`{}`), nil
}

func (b *blockingExec) counts() (runs, most int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs, b.most
}

// TestLiveExecutionIsNotRunTwiceWhenTheStoreClockSteps steps the store's
// clock forward (NTP steps on the database host), once and then again,
// while gate A's executor is running, and lets gate B, on the same SQLite
// file, run Recover over and over meanwhile. The gate promises that two
// runs of one ticket never overlap in time: B must not start the call
// while A's run is still inside the executor. A gate that measured its
// wait for A's renewals on the database's clock is taken in: the naive
// variant shows the attack landing.
func TestLiveExecutionIsNotRunTwiceWhenTheStoreClockSteps(t *testing.T) {
	const lease = 7 * time.Second
	for _, step := range []time.Duration{lease, lease + store.MaxSkew, 3 * lease} {
		for _, naive := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/naive=%v", step, naive), func(t *testing.T) {
				ctx := context.Background()
				path := filepath.Join(t.TempDir(), "asu.db")
				clock := stepuptest.NewClock(stepuptest.Start())
				exec := &blockingExec{release: make(chan struct{})}
				key := []byte("the key both gates of one store share!")
				var gates []*gate.Gate
				for i := range 2 {
					db := openSQLiteAt(t, path, clock)
					opts := []gate.Option{gate.WithExecutor("write_draft", exec), gate.WithKey(key), gate.WithLease(lease),
						gate.WithInstance(fmt.Sprintf("gate-%c", 'a'+i))}
					if naive {
						opts = append(opts, gate.WithLocalClock(clock.Now)) // waits on the database's clock
					}
					g, err := gate.New(db, stepuptest.SeedCatalog(), stepuptest.Passkeys(db), opts...)
					require.NoError(t, err)
					gates = append(gates, g)
				}
				tk, err := gates[0].Propose(ctx, stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"a@example.com"}`),
					Session: "s", Principal: agentFor("user:dana")})
				require.NoError(t, err)
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); _, _ = gates[0].Execute(ctx, tk.ID) }()
				require.Eventually(t, func() bool { r, _ := exec.counts(); return r == 1 }, 5*time.Second, 5*time.Millisecond)
				// All of this is well inside A's renewal period (lease/3).
				for i := range 6 {
					if i == 0 || i == 3 {
						clock.Advance(step)
					}
					wg.Add(1)
					go func() { defer wg.Done(); _, _ = gates[1].Recover(ctx) }()
					time.Sleep(50 * time.Millisecond)
				}
				close(exec.release)
				wg.Wait()
				_, most := exec.counts()
				if naive {
					assert.Equal(t, 2, most, "the naive variant: B took over A's live run")
					return
				}
				assert.Equal(t, 1, most, "two runs of one ticket were inside the executor at once")
			})
		}
	}
}

// TestEveryMalformedCallIsADenialWithARow proposes calls with each field
// oversized, malformed or hostile, in several sizes and shapes: each is
// answered as a denial (never a store error, never a panic), stores no
// ticket, and leaves exactly one audit row. Fields within the store's
// limits (store.MaxKeySize for identifiers, store.MaxFieldSize for text)
// may also park; they must still not fail.
func TestEveryMalformedCallIsADenialWithARow(t *testing.T) {
	ctx := context.Background()
	big := func(n int) string { return strings.Repeat("a", n) }
	type mutation struct {
		name    string
		mayPark bool
		edit    func(c *stepup.Call)
	}
	var muts []mutation
	for _, n := range []int{store.MaxKeySize + 1, 64 << 10, store.MaxFieldSize + 1} {
		s := big(n)
		text := n <= store.MaxFieldSize // within the limit of free text
		muts = append(muts,
			mutation{fmt.Sprintf("task %d", n), false, func(c *stepup.Call) { c.Task = s }},
			mutation{fmt.Sprintf("step %d", n), false, func(c *stepup.Call) { c.Step = s }},
			mutation{fmt.Sprintf("session %d", n), false, func(c *stepup.Call) { c.Session = s }},
			mutation{fmt.Sprintf("tool %d", n), false, func(c *stepup.Call) { c.Tool = s }},
			mutation{fmt.Sprintf("grant %d", n), false, func(c *stepup.Call) { c.Grant = s }},
			mutation{fmt.Sprintf("rationale %d", n), text, func(c *stepup.Call) { c.Rationale = s }},
			mutation{fmt.Sprintf("taint label %d", n), text, func(c *stepup.Call) { c.Taint = []string{s} }},
			mutation{fmt.Sprintf("agent %d", n), false, func(c *stepup.Call) { c.Principal.Agent = "agent:" + s }},
			mutation{fmt.Sprintf("user %d", n), false, func(c *stepup.Call) { c.Principal.User = "user:" + s }},
			mutation{fmt.Sprintf("delegation %d", n), false, func(c *stepup.Call) { c.Principal.Delegations = []string{"agent:" + s} }},
			mutation{fmt.Sprintf("subject %d", n), text, func(c *stepup.Call) {
				c.Args = json.RawMessage(`{"to":"finance@example.com","subject":"` + s + `","attachment":"q3.csv"}`)
			}},
		)
	}
	for _, n := range []int{store.MaxTaint + 1, 4096, 100000} {
		muts = append(muts,
			mutation{fmt.Sprintf("%d taint labels", n), false, func(c *stepup.Call) { c.Taint = make([]string, n) }},
			mutation{fmt.Sprintf("%d delegations", n), false, func(c *stepup.Call) {
				for i := range n {
					c.Principal.Delegations = append(c.Principal.Delegations, fmt.Sprintf("agent:d%d", i))
				}
			}},
		)
	}
	// Invalid UTF-8 is refused; control characters are valid text, kept
	// and escaped where shown, so they may park.
	for _, bad := range []string{"\xff", "\xed\xa0\x80", "a\x00b", "\x1b[2J"} {
		valid := utf8.ValidString(bad)
		muts = append(muts,
			mutation{fmt.Sprintf("task %q", bad), valid, func(c *stepup.Call) { c.Task = bad }},
			mutation{fmt.Sprintf("session %q", bad), valid, func(c *stepup.Call) { c.Session = bad }},
			mutation{fmt.Sprintf("taint %q", bad), valid, func(c *stepup.Call) { c.Taint = []string{bad} }},
			mutation{fmt.Sprintf("grant %q", bad), valid, func(c *stepup.Call) { c.Grant = bad }},
			mutation{fmt.Sprintf("rationale %q", bad), valid, func(c *stepup.Call) { c.Rationale = bad }},
		)
	}
	for _, args := range []string{``, `null`, `[]`, `"x"`, `{"to":1,"to":2}`, `{"to":"a@example.com"`,
		strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000), `{"n":1e999999}`, `{"s":"\ud800"}`} {
		muts = append(muts, mutation{fmt.Sprintf("args %.40q", args), false, func(c *stepup.Call) { c.Args = json.RawMessage(args) }})
	}
	muts = append(muts,
		mutation{"reserved tool", false, func(c *stepup.Call) { c.Tool = plug.GrantTool }},
		mutation{"no agent", false, func(c *stepup.Call) { c.Principal.Agent = "" }},
		mutation{"no user", false, func(c *stepup.Call) { c.Principal.User = "" }},
		mutation{"user is an agent", false, func(c *stepup.Call) { c.Principal.User = "agent:reports" }},
		mutation{"agent is a user", false, func(c *stepup.Call) { c.Principal.Agent = "user:dana" }},
		mutation{"agent is the policy", false, func(c *stepup.Call) { c.Principal.Agent = "policy:x" }},
		mutation{"delegation is the user", false, func(c *stepup.Call) { c.Principal.Delegations = []string{"user:dana"} }},
	)
	w := newWorld(t, gate.WithoutFloodControlUnsafe())
	for i, m := range muts {
		t.Run(m.name, func(t *testing.T) {
			head, err := w.Store.AuditHead(ctx)
			require.NoError(t, err)
			before, _, err := w.Store.List(ctx, store.Filter{Limit: store.MaxListLimit})
			require.NoError(t, err)
			c := sendEmail("finance@example.com")
			c.Session = fmt.Sprintf("sess-%d", i)
			m.edit(&c)
			tk, err := w.Gate.Propose(ctx, c)
			if !errors.Is(err, stepup.ErrTooLarge) { // over a size limit: the denial and the error a runtime tells apart
				require.NoError(t, err, "a refusal is a denial, not an error")
			}
			if m.mayPark && tk.Status == stepup.StatusPending {
				return
			}
			assert.Equal(t, stepup.StatusDenied, tk.Status)
			after, err := w.Store.AuditHead(ctx)
			require.NoError(t, err)
			assert.Equal(t, head.Seq+1, after.Seq, "one row per refusal")
			assert.Equal(t, audit.DecisionDeny, after.Decision)
			page, _, err := w.Store.List(ctx, store.Filter{Limit: store.MaxListLimit})
			require.NoError(t, err)
			assert.Equal(t, len(before), len(page), "nothing stored")
		})
	}
}

// TestRacingDecisionsMakeOneDecision races, on one pending ticket, an
// approval, a denial, the runtime's cancel, a sweep across the expiry,
// executions and an administrator's revocation, in many orders and
// timings. Whatever wins, the ticket gets one decision with one row: it
// runs at most once, only if approved and not revoked, and a revoked,
// denied, cancelled or expired ticket never runs.
func TestRacingDecisionsMakeOneDecision(t *testing.T) {
	ctx := context.Background()
	decisions := map[string]bool{audit.DecisionApproved: true, audit.DecisionDenied: true,
		audit.DecisionCancelled: true, audit.DecisionExpired: true}
	for trial := range 40 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			w := stepuptest.NewWorldWith(t, namedApprover{"user:dana"}, gate.WithoutFloodControlUnsafe())
			tk := pendingTicket(t, w, "finance@example.com")
			if trial%4 == 3 {
				w.Clock.Advance(gate.DefaultTTL - time.Second) // the expiry is in play
			}
			ops := []func(){
				func() { _, _ = w.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`)) },
				func() { _, _ = w.Gate.Desk().Deny(ctx, tk.ID, []byte(`no`), "") },
				func() { _, _ = w.Gate.Cancel(ctx, tk.ID, "") },
				func() { _, _ = w.Gate.Execute(ctx, tk.ID) },
				func() { _, _ = w.Gate.Admin().RevokeTicket(ctx, tk.ID, "user:ops", "") },
				func() {
					if trial%4 == 3 {
						w.Clock.Advance(time.Second)
					}
					_, _ = w.Gate.Sweep(ctx)
				},
				func() { _, _ = w.Gate.Execute(ctx, tk.ID) },
			}
			var wg sync.WaitGroup
			for i := range ops {
				op := ops[(i+trial)%len(ops)]
				if (trial/7)%2 == 1 && i%2 == 0 {
					op() // some run in order, the rest at once
					continue
				}
				wg.Add(1)
				go func() { defer wg.Done(); op() }()
			}
			wg.Wait()
			_, _ = w.Gate.Execute(ctx, tk.ID) // and once more after the dust settles

			a, err := w.Store.Get(ctx, string(tk.ID))
			require.NoError(t, err)
			rows, err := w.Store.AuditSeq(ctx, 0, 1<<62)
			require.NoError(t, err)
			var mine []string
			for _, r := range rows {
				if r.TicketID == string(tk.ID) && decisions[r.Decision] {
					mine = append(mine, r.Decision)
				}
			}
			assert.Len(t, mine, 1, "one decision per ticket, got %v (state %s)", mine, a.State)
			runs := w.Exec.Count()
			assert.LessOrEqual(t, runs, 1)
			switch a.State {
			case store.Done:
				assert.Equal(t, 1, runs)
				assert.Equal(t, []string{audit.DecisionApproved}, mine)
			case store.Revoked, store.Denied, store.Cancelled, store.Expired, store.Pending:
				assert.Zero(t, runs, "a %s ticket ran", a.State)
			case store.Approved:
				assert.Zero(t, runs)
			default:
				t.Errorf("unexpected state %s", a.State)
			}
		})
	}
}

// TestNobodyGrantsForSomeoneElse has people other than user:dana try to
// make a grant that covers dana's agent's calls: a grant asked for dana
// and approved by another person, and grants another person asks for
// and approves themselves that name dana's template, dana's exact call or
// a plan of it. None may cover dana's call: it still goes to a person.
func TestNobodyGrantsForSomeoneElse(t *testing.T) {
	ctx := context.Background()
	call := refund(`{"order":"A-17","amount":120}`)
	d, err := canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Step: call.Step, Principal: call.Principal,
		PolicyVersion: "refunds-1", Audience: "payments"}.Digest()
	require.NoError(t, err)
	tmpl := func(user string) grant.Grant {
		g := refundTemplate()
		g.Template.User = user
		return g
	}
	kinds := map[string]func(asker string) gate.GrantSpec{
		"template for dana": func(string) gate.GrantSpec { return gate.GrantSpec{Grant: tmpl("user:dana"), Uses: 5} },
		"template for the asker": func(a string) gate.GrantSpec {
			return gate.GrantSpec{Grant: tmpl(a), Uses: 5}
		},
		"exact call of dana":  func(string) gate.GrantSpec { return gate.GrantSpec{Grant: grant.Exact(d), Uses: 1} },
		"plan of dana's call": func(string) gate.GrantSpec { return gate.GrantSpec{Grant: grant.Plan(d)} },
	}
	t.Run("dana's own grant covers it", func(t *testing.T) { // the control: the attack's path works
		h := stepuptest.NewGateWith(t, refundCatalog(t, ""), namedApprover{"user:dana"}, gate.WithoutFloodControlUnsafe())
		tk, err := h.Gate.Desk().Grant(ctx, "user:dana", gate.GrantSpec{Grant: tmpl("user:dana"), Uses: 5,
			ExpiresAt: h.Clock.Now().Add(time.Hour)})
		require.NoError(t, err)
		_, err = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
		require.NoError(t, err)
		c := call
		c.Grant = string(tk.ID)
		got, err := h.Gate.Propose(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusApproved, got.Status)
	})
	for _, approver := range append([]string{"user:erin", "user:fin"}, spoofsOf("user:dana")[:6]...) {
		for _, asker := range []string{"user:dana", approver} {
			for kind, spec := range kinds {
				t.Run(fmt.Sprintf("%q approves a %s asked for %q", approver, kind, asker), func(t *testing.T) {
					h := stepuptest.NewGateWith(t, refundCatalog(t, ""), namedApprover{approver},
						gate.WithoutFloodControlUnsafe())
					s := spec(asker)
					s.ExpiresAt = h.Clock.Now().Add(time.Hour)
					var id stepup.TicketID
					if tk, err := h.Gate.Desk().Grant(ctx, asker, s); err == nil {
						id = tk.ID
						_, _ = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
					}
					c := call
					c.Grant = string(id)
					tk, err := h.Gate.Propose(ctx, c)
					require.NoError(t, err)
					assert.Equal(t, stepup.StatusPending, tk.Status, "a grant %q approved covered dana's call", approver)
				})
			}
		}
	}
}

// TestApproverGroupFollowsTheEffectNotTheRow has a database writer
// rewrite the Tool column of a refund the policy routes to the finance
// group into the name of a tool its user decides alone; the effect, its
// digest and card still say issue_refund. The user, not in the group,
// then approves it with her own passkey. Who may approve must be judged
// on what runs: the refund must not run without finance.
func TestApproverGroupFollowsTheEffectNotTheRow(t *testing.T) {
	ctx := context.Background()
	for _, other := range []string{"post_note", "send_memo"} {
		t.Run(other, func(t *testing.T) {
			cat, err := policy.NewCatalog("refunds-1",
				policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
					Schema: json.RawMessage(`{"type":"object","required":["order","amount"]}`),
					Limits: []policy.Limit{policy.MaxAmount("amount", "5000")}, Approvers: "finance", Audience: "payments"},
				policy.Tool{Name: other, Title: "Post a note", Class: card.ClassExternal, Audience: "payments"})
			require.NoError(t, err)
			exec := &stepuptest.Recorder{} // one executor per service, dispatching on the effect's tool
			h := stepuptest.NewGate(t, cat, gate.WithApproverGroup("finance", "user:fin"),
				gate.WithExecutor("issue_refund", exec), gate.WithExecutor(other, exec))
			tk, err := h.Gate.Propose(ctx, refund(`{"order":"A-17","amount":4000}`))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = h.Approve(tk.ID)
			require.ErrorIs(t, err, stepup.ErrNotPermitted, "the control: dana is not in finance")

			row, err := h.Store.Get(ctx, string(tk.ID))
			require.NoError(t, err)
			row.ID, row.Tool, row.Session = "", other, "sess-forged"
			forged, _, err := h.Store.Park(ctx, row, store.Caps{}, nil)
			require.NoError(t, err)
			_, aerr := h.Approve(stepup.TicketID(forged.ID))
			_, eerr := h.Gate.Execute(ctx, stepup.TicketID(forged.ID))
			assert.Error(t, errors.Join(aerr, eerr))
			assert.Zero(t, exec.Count(), "a refund routed to finance ran on its user's approval")
		})
	}
}

// TestEscalationOpensOnlyAfterTheFirstStage has a member of the group a
// ticket escalates to try to approve it at times around the end of the
// first stage and of the ticket: not before the first stage ends, and
// not once the ticket expired.
func TestEscalationOpensOnlyAfterTheFirstStage(t *testing.T) {
	ctx := context.Background()
	const after = 10 * time.Minute
	for _, off := range []time.Duration{-after + time.Second, -time.Second, -time.Millisecond, 0, time.Millisecond,
		time.Second, after - time.Second, after, after + time.Second} {
		t.Run(off.String(), func(t *testing.T) {
			cat, err := policy.NewCatalog("refunds-1",
				policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
					Approvers: "finance", Audience: "payments",
					Timeout: plug.Timeout{After: after, Outcome: plug.OutcomeEscalate, EscalateTo: "managers"}})
			require.NoError(t, err)
			h := stepuptest.NewGateWith(t, cat, namedApprover{"user:boss"}, gate.WithoutFloodControlUnsafe(),
				gate.WithApproverGroup("finance", "user:fin"), gate.WithApproverGroup("managers", "user:boss"))
			tk, err := h.Gate.Propose(ctx, refund(`{"order":"A-17","amount":10}`))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			h.Clock.Advance(after + off)
			_, err = h.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
			switch {
			case off < 0:
				assert.ErrorIs(t, err, stepup.ErrNotPermitted, "approved before the escalation")
			case off < after:
				assert.NoError(t, err)
			default:
				assert.ErrorIs(t, err, stepup.ErrExpired)
			}
		})
	}
}

// TestExpiryIsExactByTheStoreClock executes approved tickets at times
// around their expiry, by the store's clock: at or after ExpiresAt
// nothing runs and the refusal says expired.
func TestExpiryIsExactByTheStoreClock(t *testing.T) {
	ctx := context.Background()
	for _, off := range []time.Duration{-time.Second, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond,
		time.Second, time.Hour} {
		t.Run(off.String(), func(t *testing.T) {
			w := newWorld(t)
			tk := approved(t, w, sendEmail("finance@example.com"))
			w.Clock.Set(tk.ExpiresAt.Add(off))
			_, err := w.Gate.Execute(ctx, tk.ID)
			if off < 0 {
				assert.NoError(t, err)
				assert.Equal(t, 1, w.Exec.Count())
				return
			}
			assert.ErrorIs(t, err, stepup.ErrExpired)
			assert.Zero(t, w.Exec.Count())
		})
	}
}

// TestAbandonedCallsLeaveNoGoroutines has an agent start many Waits and
// Executes and walk away (contexts cancelled at random points), and
// starts and stops Maintain: once everything returned, the goroutine
// count is back where it started.
func TestAbandonedCallsLeaveNoGoroutines(t *testing.T) {
	w := newWorld(t, gate.WithoutFloodControlUnsafe())
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range 64 {
		c := sendEmail("finance@example.com")
		c.Step = fmt.Sprintf("s-%d", i)
		tk, err := w.Gate.Propose(context.Background(), c)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%8)*time.Millisecond)
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = w.Gate.Wait(ctx, tk.ID) }()
		go func() { defer wg.Done(); _, _ = w.Gate.Execute(ctx, tk.ID) }()
		if i%3 == 0 {
			cancel()
		} else {
			defer cancel()
		}
	}
	mctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Gate.Maintain(mctx, time.Millisecond, nil) }()
	time.Sleep(20 * time.Millisecond)
	stop()
	assert.ErrorIs(t, <-done, context.Canceled)
	wg.Wait()
	assertGoroutinesBack(t, base)
}

// assertGoroutinesBack waits up to 5s for the goroutine count to fall
// back to base.
func assertGoroutinesBack(t *testing.T, base int) {
	t.Helper()
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > base && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after:\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestPlantedCredentialDoesNotApprove has a database writer, holding
// neither dana's passkey nor the gate's key, insert a credential of its
// own for user:dana (and for look-alikes of her) straight into the
// credentials table, then answer her parked call with it through the
// ordinary desk. The database is not trusted to approve: a credential
// no enrollment ceremony made must not make a call run.
func TestPlantedCredentialDoesNotApprove(t *testing.T) {
	ctx := context.Background()
	for _, user := range []string{"user:dana", "user:dana ", "User:dana"} {
		t.Run(fmt.Sprintf("%q", user), func(t *testing.T) {
			w := newWorld(t)
			planted := plantCredential(t, w, user)
			tk := pendingTicket(t, w, "finance@exarnple.com")
			p, err := w.Gate.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			var aerr error
			assertion, err := planted.Assert(p.Options, stepuptest.WithCredential(planted.CredentialIDs()[0]))
			if err == nil {
				_, aerr = w.Gate.Desk().Approve(ctx, tk.ID, assertion)
			}
			_, eerr := w.Gate.Execute(ctx, tk.ID)
			assert.Error(t, errors.Join(err, aerr, eerr))
			assert.Zero(t, w.Exec.Count(), "a credential planted in the database approved a call that ran")
		})
	}
}

// TestRecoverDoesNotTrustTheDatabaseOnSQLite is the forged execution of
// TestRecoverDoesNotTrustTheDatabase on the embedded durable store, with
// the writer on its own connection pool to the gate's file: the writer's
// row has no evidence at all.
func TestRecoverDoesNotTrustTheDatabaseOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asu.db")
	clock := stepuptest.NewClock(stepuptest.Start())
	exec := &stepuptest.Recorder{}
	writer := openSQLiteAt(t, path, clock)
	db := openSQLiteAt(t, path, clock)
	g, err := gate.New(db, stepuptest.SeedCatalog(), stepuptest.Passkeys(db), gate.WithExecutor("issue_refund", exec),
		gate.WithKey([]byte("the key both gates of one store share!")))
	require.NoError(t, err)
	tk, err := g.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: json.RawMessage(`{"order":"A-1","amount":400}`),
		Session: "s", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	now := clock.Now()
	_, err = writer.Resolve(ctx, string(tk.ID), store.Resolution{To: store.Approved, Approver: "user:dana", At: now}, nil)
	require.NoError(t, err)
	_, err = writer.Consume(ctx, string(tk.ID), store.Claim{Key: "k", Owner: "gate-ghost", At: now,
		LeaseUntil: now.Add(time.Second)}, nil)
	require.NoError(t, err)
	clock.Advance(2 * time.Second)
	_, _ = g.Recover(ctx)
	assert.Zero(t, exec.Count(), "a refund nobody approved ran through Recover")
}
