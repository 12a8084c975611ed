package store_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := store.NewID()
		raw, err := hex.DecodeString(id)
		require.NoError(t, err)
		assert.Len(t, raw, 16)
		assert.False(t, seen[id], "ids repeat")
		seen[id] = true
	}
}

func TestStateValid(t *testing.T) {
	for _, s := range []store.State{"", "PENDING", "approved ", "used", "recovered"} {
		assert.False(t, s.Valid(), s)
	}
}

func TestResolutionCheck(t *testing.T) {
	cases := []struct {
		name string
		r    store.Resolution
		want error
	}{
		{"approve", store.Resolution{To: store.Approved, At: t0}, nil},
		{"cancel", store.Resolution{To: store.Cancelled, At: t0}, nil},
		{"revoke", store.Resolution{To: store.Revoked, At: t0}, nil},
		{"to done", store.Resolution{To: store.Done, At: t0}, store.ErrInvalid},
		{"to abandoned", store.Resolution{To: store.Abandoned, At: t0}, store.ErrInvalid},
		{"no time", store.Resolution{To: store.Denied}, store.ErrInvalid},
		{"big reason", store.Resolution{To: store.Denied, At: t0, Reason: strings.Repeat("r", store.MaxFieldSize+1)}, store.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Check()
			if c.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, c.want)
			}
		})
	}
}

func TestCheckRefusalsNameNoValues(t *testing.T) {
	a := storetest.Ticket("secret-session", "secret-user", 1)
	a.Rationale = strings.Repeat("secret", store.MaxFieldSize)
	err := a.Check()
	require.ErrorIs(t, err, store.ErrTooLarge)
	assert.NotContains(t, err.Error(), "secret")
}

func TestClaimCheck(t *testing.T) {
	lease := t0.Add(time.Second)
	cases := []struct {
		name    string
		c       store.Claim
		consume error // CheckConsume
		reclaim error // Claim.Check
	}{
		{"valid", store.Claim{Key: "k", Owner: "g", At: t0, LeaseUntil: lease}, nil, nil},
		{"no key", store.Claim{Owner: "g", At: t0, LeaseUntil: lease}, store.ErrInvalid, nil},
		{"no owner", store.Claim{Key: "k", At: t0, LeaseUntil: lease}, store.ErrInvalid, store.ErrInvalid},
		{"no time", store.Claim{Key: "k", Owner: "g", LeaseUntil: lease}, store.ErrInvalid, store.ErrInvalid},
		{"lease in the same microsecond", store.Claim{Key: "k", Owner: "g", At: t0, LeaseUntil: t0.Add(500)},
			store.ErrInvalid, store.ErrInvalid},
		{"lease before", store.Claim{Key: "k", Owner: "g", At: t0, LeaseUntil: t0.Add(-time.Second)},
			store.ErrInvalid, store.ErrInvalid},
		{"big key", store.Claim{Key: strings.Repeat("k", store.MaxKeySize+1), Owner: "g", At: t0, LeaseUntil: lease},
			store.ErrTooLarge, store.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(err, want error) {
				if want == nil {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, want)
				}
			}
			check(store.CheckConsume(c.c), c.consume)
			check(c.c.Check(), c.reclaim)
		})
	}
}

func TestOutcomeCheck(t *testing.T) {
	for _, s := range []store.State{store.Done, store.Failed, store.Abandoned} {
		assert.NoError(t, store.Outcome{State: s, At: t0}.Check(), s)
		assert.ErrorIs(t, store.Outcome{State: s}.Check(), store.ErrInvalid, s)
		assert.ErrorIs(t, store.Outcome{State: s, At: t0, Result: make([]byte, store.MaxFieldSize+1)}.Check(),
			store.ErrTooLarge, s)
	}
	for _, s := range []store.State{"", store.Pending, store.Approved, store.Executing, store.Revoked, "ran"} {
		assert.ErrorIs(t, store.Outcome{State: s, At: t0}.Check(), store.ErrInvalid, s)
	}
}

func TestFilterCheck(t *testing.T) {
	assert.NoError(t, store.Filter{States: []store.State{store.Pending, store.Revoked}, Limit: 5000}.Check())
	assert.ErrorIs(t, store.Filter{Limit: -1}.Check(), store.ErrInvalid)
	assert.ErrorIs(t, store.Filter{States: []store.State{"nope"}}.Check(), store.ErrInvalid)
	assert.ErrorIs(t, store.Filter{States: make([]store.State, 17)}.Check(), store.ErrInvalid)
	assert.ErrorIs(t, store.Filter{User: strings.Repeat("u", store.MaxKeySize+1)}.Check(), store.ErrTooLarge)
	for limit, want := range map[int]int{0: 100, 1: 1, 1000: 1000, 1001: 1000, -5: 100} {
		assert.Equal(t, want, store.Filter{Limit: limit}.PageSize(), limit)
	}
}

func TestCheckLease(t *testing.T) {
	assert.NoError(t, store.CheckLease("g", 1, t0))
	assert.ErrorIs(t, store.CheckLease("", 1, t0), store.ErrInvalid)
	assert.ErrorIs(t, store.CheckLease("g", 0, t0), store.ErrInvalid)
	assert.ErrorIs(t, store.CheckLease("g", -3, t0), store.ErrInvalid)
	assert.ErrorIs(t, store.CheckLease("g", 1, time.Time{}), store.ErrInvalid)
	assert.ErrorIs(t, store.CheckLease(strings.Repeat("g", store.MaxKeySize+1), 1, t0), store.ErrTooLarge)
}

func TestCheckSkew(t *testing.T) {
	for _, d := range []time.Duration{0, time.Nanosecond, store.MaxSkew, -store.MaxSkew} {
		assert.NoError(t, store.CheckSkew(t0.Add(d), t0), d)
	}
	for _, d := range []time.Duration{store.MaxSkew + time.Nanosecond, -store.MaxSkew - time.Nanosecond,
		time.Hour, -10 * time.Minute, 1 << 62} {
		err := store.CheckSkew(t0.Add(d), t0)
		assert.ErrorIs(t, err, store.ErrClockSkew, d)
	}
}

func TestChainNext(t *testing.T) {
	r1, err := store.ChainNext(audit.Record{}, storetest.Record("task", t0), t0)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r1.Seq)
	assert.True(t, r1.PrevHash.IsZero())
	assert.Equal(t, t0.UnixMilli(), r1.Time, "stamped with the store's clock")
	in := storetest.Record("task", t0.Add(time.Hour))
	in.Args = json.RawMessage(`{ "b": 2, "a": 1 }`)
	in.Seq, in.PrevHash = 77, canon.Digest{9} // ignored
	r2, err := store.ChainNext(r1, in, t0.Add(-time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(2), r2.Seq)
	assert.Equal(t, r1.Hash, r2.PrevHash)
	assert.Equal(t, r1.Time, r2.Time, "a clock behind the head does not take time back")
	assert.Equal(t, json.RawMessage(`{"a":1,"b":2}`), r2.Args, "args become canonical")
	assert.NoError(t, audit.VerifyChain([]audit.Record{r1, r2}, canon.Digest{}))
	r3, err := store.ChainNext(r2, storetest.Record("task", t0), t0.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Second).UnixMilli(), r3.Time)

	in.Args = json.RawMessage(`{"a":1,"a":2}`)
	_, err = store.ChainNext(r2, in, t0)
	assert.ErrorIs(t, err, store.ErrInvalid, "args canon refuses cannot be chained")
	in = storetest.Record("task", t0)
	in.Decision = ""
	_, err = store.ChainNext(r2, in, t0)
	assert.ErrorIs(t, err, store.ErrInvalid, "a record CheckAudit refuses cannot be chained")
	in = storetest.Record("task", t0)
	in.Reason = "\xff"
	_, err = store.ChainNext(r2, in, t0)
	assert.ErrorIs(t, err, store.ErrInvalid, "text that is not UTF-8 cannot be chained")
}

// FuzzChainNext: any record either is refused with a sentinel or chains
// into a record that verifies after its head, never earlier in time.
func FuzzChainNext(f *testing.F) {
	f.Add("deny", "reason", `{"a":1}`, int64(5), int64(1000))
	f.Add("", "", ``, int64(0), int64(0))
	f.Add("x", "\xff", `{"a":1,"a":2}`, int64(9), int64(-5))
	f.Add("allow", "r", `{"n":1e400}`, int64(1<<40), int64(1<<50))
	f.Fuzz(func(t *testing.T, decision, reason, args string, headTime, now int64) {
		head, err := store.ChainNext(audit.Record{}, storetest.Record("head", time.UnixMilli(headTime)),
			time.UnixMilli(headTime))
		require.NoError(t, err)
		r := storetest.Record("task", t0)
		r.Decision, r.Reason, r.Args = decision, reason, json.RawMessage(args)
		got, err := store.ChainNext(head, r, time.UnixMilli(now))
		if err != nil {
			if !errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrTooLarge) {
				t.Fatalf("refusal without a sentinel: %v", err)
			}
			return
		}
		require.NoError(t, audit.VerifyChain([]audit.Record{head, got}, canon.Digest{}))
		require.GreaterOrEqual(t, got.Time, head.Time)
		require.Equal(t, head.Seq+1, got.Seq)
	})
}
