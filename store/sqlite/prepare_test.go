package sqlite_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// endingCtx is a context that ends right after the store's entry check:
// its first Err is nil and every later one is context.Canceled, as for a
// caller that gives up while a read is starting.
type endingCtx struct {
	context.Context
	calls atomic.Int32
	done  chan struct{}
}

func newEndingCtx() *endingCtx {
	c := &endingCtx{Context: context.Background(), done: make(chan struct{})}
	close(c.done)
	return c
}

func (c *endingCtx) Done() <-chan struct{} { return c.done }

func (c *endingCtx) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// TestReadEndingContext: a read whose statement cannot be prepared
// (here: its context ended after the entry check, before the statement
// was first prepared) fails with the context's error. It used to retry the
// query through the same cache without end, overflowing the goroutine's
// stack and killing the process: any caller who gave up at that instant
// took the gate down.
func TestReadEndingContext(t *testing.T) {
	reads := []struct {
		name string
		read func(context.Context, store.Store) error
	}{
		{"GetStreak", func(ctx context.Context, s store.Store) error { _, err := s.GetStreak(ctx, "k"); return err }},
		{"GetStreaks", func(ctx context.Context, s store.Store) error {
			_, err := store.GetStreaks(ctx, s, []string{"k"})
			return err
		}},
		{"Get", func(ctx context.Context, s store.Store) error { _, err := s.Get(ctx, "id"); return err }},
		{"GetGrant", func(ctx context.Context, s store.Store) error { _, err := s.GetGrant(ctx, "id"); return err }},
		{"AuditHead", func(ctx context.Context, s store.Store) error { _, err := s.AuditHead(ctx); return err }},
		{"GetCredential", func(ctx context.Context, s store.Store) error {
			_, err := s.GetCredential(ctx, []byte("id"))
			return err
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			s := open(t, filepath.Join(t.TempDir(), "asu.db")) // nothing prepared yet
			err := r.read(newEndingCtx(), s)
			require.Error(t, err)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}
