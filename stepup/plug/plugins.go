package plug

import (
	"context"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
)

// Canon seals a call into its canonical effect once, at Propose: the
// canonical bytes and digest the effect carries from then on, through the
// card, the grant check, the store and the executor. canon.Seal is the
// default; a Canon may refuse more (tighter size or depth bounds), but
// what it seals must be canon's canonical form, since Execute re-reads it
// with canon.ParseSealed. A Canon that also has a method
// SealArgs(e canon.Effect, args canon.Value) (canon.Sealed, error), as
// canon.SealArgs, is handed the arguments the gate already parsed and
// seals without reading them again.
type Canon interface {
	Seal(e canon.Effect) (canon.Sealed, error)
}

// Grants decides whether the delegated approval a call names covers it,
// and names the record whose use the call takes (the store takes it in
// the transaction that stores the call approved). It never takes a use
// itself. The default is grant.Target over the gate's store.
type Grants interface {
	Target(ctx context.Context, id string, s canon.Sealed) (string, error)
}

// Renderer renders the approval card of a sealed effect from trusted
// context only. A localized or branded renderer plugs in with
// [WithRenderer]; card.Renderer is the default. The card's hash covers
// the renderer's identity and is signed in the approval challenge, so
// what the approver saw is what the passkey signed.
type Renderer interface {
	Render(e canon.Sealed, c card.Context) (*card.Card, error)
}

// Flood admits the calls that would prompt a person and learns how people
// decided them; *flood.Limiter is the default. Admit refuses with a
// *flood.LimitError (rate limited or locked out, with a retry time) or
// any other error, which the gate treats as a refusal.
type Flood interface {
	Admit(ctx context.Context, r flood.Request) error
	Decided(ctx context.Context, r flood.Request, approved bool) error
	// Caps bounds the live pending tickets per session and per user,
	// enforced by the store when it parks a ticket.
	Caps() store.Caps
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
