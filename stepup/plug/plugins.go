package plug

import (
	"context"

	"github.com/agentstepup/asu/canon"
)

// Coverage decides whether the delegated approval a call names covers it,
// and names the record whose use the call takes (the store takes it in
// the transaction that stores the call approved). It never takes a use
// itself. The default is grant.Target over the gate's store.
//
// A Coverage check may refuse more than the default, never cover more: the
// gate runs a call a Coverage check accepted only when the grant the call names was
// issued by its user's own approval and, as that user signed it, covers
// the call (P6). Every call that names a grant and needs approval asks
// it, contained like every plug-in: a panic or a hang covers nothing.
type Coverage interface {
	Target(ctx context.Context, id string, s canon.Sealed) (string, error)
}

// Executor runs one tool's effect. It receives the stored effect, never
// the runtime's arguments, and the ticket's idempotency key.
//
// The contract is at least once with the same key: if the gate running a
// call dies, or loses its lease, before the outcome is recorded, another
// gate runs the call again with the same key once the lease has expired.
// Two runs of one ticket never overlap in time (a gate that cannot renew
// its lease cancels the run's context before the lease ends), and an
// executor must not repeat the effect for a key it has seen.
type Executor interface {
	Execute(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)
}

// ExecutorFunc adapts a function to [Executor].
type ExecutorFunc func(ctx context.Context, e canon.Effect, idempotencyKey string) ([]byte, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	return f(ctx, e, key)
}
