package plug

import (
	"context"

	"github.com/agentstepup/asu/stepup"
)

// ticketKey is the context key of [WithTicket].
type ticketKey struct{}

// WithTicket returns ctx carrying ticket id, for an [Executor] that tells
// the tool which ticket it runs (package httpexec sends it). The ticket
// id is for the tool's records only: what identifies the approval to the
// tool is the idempotency key, which every run of it carries.
func WithTicket(ctx context.Context, id stepup.TicketID) context.Context {
	return context.WithValue(ctx, ticketKey{}, id)
}

// TicketOf returns the ticket id ctx carries ([WithTicket]), if any.
func TicketOf(ctx context.Context) (stepup.TicketID, bool) {
	id, ok := ctx.Value(ticketKey{}).(stepup.TicketID)
	return id, ok
}
