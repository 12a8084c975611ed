package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

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
