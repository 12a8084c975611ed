package core

import (
	"context"
	"sync"
)

// MaxBackground bounds the background workers (placing practice
// requests) running at once; work beyond them waits in a queue.
const MaxBackground = 16

// MaxBackgroundQueue bounds the bytes of work waiting for a background
// worker, as its callers weigh it. Work that would pass it runs on the
// caller's path instead: it is never dropped, so a burst of real requests
// keeps its practice rate, and memory stays bounded under any burst.
const MaxBackgroundQueue = 64 << 20

// background runs the work a gate does off the agent's path, so that
// nothing of it shows in the time an agent's call takes, and so that
// Settle can wait for it.
type background struct {
	mu      sync.Mutex
	running int           // workers
	queue   []queued      // waiting, oldest first
	weight  int           // of queue
	idle    chan struct{} // closed when nothing runs or waits; nil while idle
}

type queued struct {
	f      func()
	weight int
}

// Background runs f off the caller's path: on a worker of its own while
// fewer than [MaxBackground] run, else queued in order for the next free
// worker. Only when the queue's weight would pass [MaxBackgroundQueue]
// does f run on the caller's path, before Background returns; it reports
// whether f ran off the path. weight is what f holds while it waits
// (the bytes of its copy). A panic of f is contained (f is best effort).
func (g *Gate) Background(f func(), weight int) bool {
	b := &g.bg
	b.mu.Lock()
	switch {
	case b.running < MaxBackground:
		b.running++
		b.busy()
		b.mu.Unlock()
		go b.work(f)
		return true
	case b.weight+weight <= MaxBackgroundQueue:
		b.queue = append(b.queue, queued{f: f, weight: weight})
		b.weight += weight
		b.mu.Unlock()
		return true
	}
	b.mu.Unlock()
	contained(f)
	return false
}

// busy marks the work set as not idle; b.mu is held.
func (b *background) busy() {
	if b.idle == nil {
		b.idle = make(chan struct{})
	}
}

// work runs f, then what waits, until the queue is empty.
func (b *background) work(f func()) {
	for {
		contained(f)
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running--
			if b.running == 0 {
				close(b.idle)
				b.idle = nil
			}
			b.mu.Unlock()
			return
		}
		next := b.queue[0]
		b.queue[0] = queued{}
		b.queue = b.queue[1:]
		b.weight -= next.weight
		b.mu.Unlock()
		f = next.f
	}
}

func contained(f func()) {
	defer func() { _ = recover() }()
	f()
}

// Settle waits until no background work runs or waits, or ctx ends.
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
