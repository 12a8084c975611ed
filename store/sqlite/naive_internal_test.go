package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// TestNaiveConsumeDoubleSpends shows why Consume is one conditional
// UPDATE: a check-then-act consume (read the state, then write it) lets
// every racer that read "approved" run the approval, while Consume lets
// exactly one.
func TestNaiveConsumeDoubleSpends(t *testing.T) {
	const racers = 8
	ctx := context.Background()

	naive := func(s *Store, id, key string, read *sync.WaitGroup) error {
		var state string
		if err := s.db.QueryRowContext(ctx, `SELECT state FROM approvals WHERE id = ?`, id).Scan(&state); err != nil {
			return err
		}
		read.Done()
		read.Wait() // every racer has seen "approved" before anyone writes
		if state != string(store.Approved) {
			return store.ErrConsumed
		}
		_, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = 'executing', idempotency_key = ? WHERE id = ?`, key, id)
		return err
	}
	cases := []struct {
		name    string
		consume func(s *Store, id, key string, read *sync.WaitGroup) error
		wins    int
	}{
		{"naive check then act", naive, racers},
		{"Consume", func(s *Store, id, key string, read *sync.WaitGroup) error {
			read.Done()
			read.Wait()
			_, err := s.Consume(ctx, id, claim(key), nil)
			return err
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
			a := approved(t, s, 1)
			var read, done sync.WaitGroup
			read.Add(racers)
			errs := make([]error, racers)
			for i := range errs {
				done.Add(1)
				go func() {
					defer done.Done()
					errs[i] = c.consume(s, a.ID, fmt.Sprintf("key-%d", i), &read)
				}()
			}
			done.Wait()
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
				} else {
					require.ErrorIs(t, err, store.ErrConsumed)
				}
			}
			assert.Equal(t, c.wins, wins)
		})
	}
}

// TestNaiveFinishOverwrites shows why Finish names the fence: after a
// reclaim, a finish that checks only the state lets the stale owner (the
// one whose lease expired, still running) write its outcome over the new
// owner's run, while Finish refuses it with store.ErrFenced.
func TestNaiveFinishOverwrites(t *testing.T) {
	ctx := context.Background()
	naive := func(s *Store, id string, _ int64, result string) error {
		n, err := s.reader().changes(ctx, `UPDATE approvals SET state = 'done', result = ? WHERE id = ? AND state = 'executing'`,
			[]byte(result), id)
		if err == nil && n == 0 {
			err = store.ErrFenced
		}
		return err
	}
	fenced := func(s *Store, id string, fence int64, result string) error {
		_, err := s.Finish(ctx, id, fence, store.Outcome{State: store.Done, Result: []byte(result), At: t0}, nil)
		return err
	}
	cases := []struct {
		name   string
		finish func(s *Store, id string, fence int64, result string) error
		stale  bool // whether the stale owner's outcome is written
	}{
		{"naive state check", naive, true},
		{"Finish", fenced, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "asu.db"), nil)
			a := approved(t, s, 1)
			_, err := s.Consume(ctx, a.ID, store.Claim{Key: "k", Owner: "gate-1", At: t0.Add(-time.Second),
				LeaseUntil: t0.Add(-time.Second / 2)}, nil)
			require.NoError(t, err)
			_, err = s.Reclaim(ctx, a.ID, 1, store.Claim{Owner: "gate-2", At: t0, LeaseUntil: t0.Add(time.Minute)}, nil)
			require.NoError(t, err)
			err = c.finish(s, a.ID, 1, `"stale"`)
			if c.stale {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, store.ErrFenced)
				require.NoError(t, c.finish(s, a.ID, 2, `"current"`))
			}
			got, err := s.Get(ctx, a.ID)
			require.NoError(t, err)
			assert.Equal(t, c.stale, string(got.Result) == `"stale"`)
		})
	}
}
