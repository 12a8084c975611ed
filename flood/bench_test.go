package flood_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// sessionKeyed is the admission before principals, kept as a baseline:
// every count keyed by the bare session id or the bare user id, a lockout
// and a rate for each (two streak reads, two counts, two reads of the
// previous window).
type sessionKeyed struct {
	counters store.Counters
	n        int64
	per      time.Duration
	after    int
}

var errRefused = errors.New("refused")

func (o *sessionKeyed) admit(ctx context.Context, session, user string, now time.Time) error {
	hash := func(id string) string {
		h := sha256.Sum256([]byte(id))
		return hex.EncodeToString(h[:])
	}
	ids := [2][2]string{{"session", hash(session)}, {"user", hash(user)}}
	for _, id := range ids {
		st, err := o.counters.GetStreak(ctx, "flood/v1/denials/"+id[0]+"/"+id[1])
		if err != nil {
			return err
		}
		if st.Count >= o.after {
			return errRefused
		}
	}
	w := now.Truncate(o.per)
	for _, id := range ids {
		key := "flood/v1/rate/" + id[0] + "/" + strconv.FormatInt(o.per.Microseconds(), 10) + "us/" + id[1]
		cur, err := o.counters.AddCount(ctx, key, w, 1)
		if err != nil {
			return err
		}
		prev, err := o.counters.AddCount(ctx, key, w.Add(-o.per), 0)
		if err != nil {
			return err
		}
		if float64(cur)+float64(prev)*float64(o.per-now.Sub(w))/float64(o.per) > float64(o.n) {
			return errRefused
		}
	}
	return nil
}

// BenchmarkAdmit measures one admission: keyed by the bare session as
// before (baseline), keyed by the principal with the same two scopes, and
// keyed by the principal with every scope on and one approver (the
// default shape: three streak reads, four counts, four reads of the
// previous window). The in-process token bucket of
// golang.org/x/time/rate is the floor no store-backed limiter reaches.
func BenchmarkAdmit(b *testing.B) {
	huge := flood.Rate{N: 1 << 60, Per: time.Minute}
	everyScope := flood.Limits{Session: huge, Agent: huge, User: huge, ApproverInflow: huge}
	twoScopes := off
	twoScopes.Session, twoScopes.User = huge, huge
	twoScopes.SessionLockout, twoScopes.UserLockout = flood.DefaultSessionLockout, flood.DefaultUserLockout
	r := flood.Request{User: "user:alice", Agent: "agent:reports", Session: "session-7", Approvers: []string{"user:alice"}}

	backends := []struct {
		name string
		open func(b *testing.B) store.Counters
	}{
		{"memory", func(*testing.B) store.Counters { return memory.New(nil) }},
		{"sqlite", func(b *testing.B) store.Counters {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
			require.NoError(b, err)
			b.Cleanup(func() { _ = st.Close() })
			return st
		}},
	}
	b.Run("baseline=xrate.Allow", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(1e12), 1<<40)
		b.ReportAllocs()
		for b.Loop() {
			if !lim.Allow() {
				b.Fatal("refused")
			}
		}
	})
	for _, be := range backends {
		b.Run("store="+be.name+"/keys=session,scopes=2", func(b *testing.B) {
			old := &sessionKeyed{counters: be.open(b), n: huge.N, per: huge.Per, after: 3}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := old.admit(ctx, r.Session, r.User, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, v := range []struct {
			name   string
			limits flood.Limits
		}{{"keys=principal,scopes=2", twoScopes}, {"keys=principal,scopes=4+approver", everyScope}} {
			b.Run("store="+be.name+"/"+v.name, func(b *testing.B) {
				lim := newLimiter(b, be.open(b), v.limits, newClock())
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if err := lim.Admit(ctx, r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
