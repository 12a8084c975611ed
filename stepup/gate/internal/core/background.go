package core

import (
	"context"
	"sync"
)

// MaxBackground bounds the background work (practice requests being
// placed) in flight at once; more is not started.
const MaxBackground = 16

// background counts the work a gate does off the agent's path, so that
// nothing of it shows in the time an agent's call takes, and so that
// Settle can wait for it.
type background struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; nil while n is zero
}

// Background runs f on a goroutine of its own, off the caller's path,
// and reports whether it did: at most [MaxBackground] run at once, and f
// is dropped beyond that. A panic of f is contained (f is best effort).
func (g *Gate) Background(f func()) bool {
	b := &g.bg
	b.mu.Lock()
	if b.n >= MaxBackground {
		b.mu.Unlock()
		return false
	}
	b.n++
	if b.idle == nil {
		b.idle = make(chan struct{})
	}
	b.mu.Unlock()
	go func() {
		defer b.done()
		defer func() { _ = recover() }()
		f()
	}()
	return true
}

func (b *background) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n--; b.n == 0 {
		close(b.idle)
		b.idle = nil
	}
}

// Settle waits until no background work runs, or ctx ends.
func (g *Gate) Settle(ctx context.Context) error {
	b := &g.bg
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
