package gate

import (
	"context"
	"crypto/ed25519"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/desk"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Admin is the operator's side of a gate: revoke approvals and grants,
// list tickets. Like [Desk], it is never handed to the agent runtime.
// Revoking passkeys and invites is enrollment's (package passkey).
type Admin struct{ ad *desk.Admin }

// Admin returns the gate's operator side.
func (g *Gate) Admin() *Admin { return &Admin{ad: desk.NewAdmin(g.rt)} }

// MaxMetricsWindow bounds the window [Admin.Metrics] reads.
const MaxMetricsWindow = 31 * 24 * time.Hour

// RevokeTicket revokes approved ticket id before it runs, in the name of
// by (an operator or an approver, recorded in the audit row). A revoked
// approval never runs: Execute refuses it with [stepup.ErrRevoked]. A
// ticket already running or run fails with [stepup.ErrResolved] or
// [stepup.ErrConsumed]. by and reason are kept as one line of text of at
// most 512 bytes each (invalid UTF-8 and control characters replaced), so
// that what was typed never keeps the revocation from being made.
func (ad *Admin) RevokeTicket(ctx context.Context, id stepup.TicketID, by, reason string) (stepup.Ticket, error) {
	return ad.ad.RevokeTicket(ctx, id, by, reason)
}

// RevokeGrant revokes grant id: from then on it covers no call, and calls
// naming it go to a person. by names who revoked it in the audit row; by
// and reason are kept as [Admin.RevokeTicket] keeps them.
func (ad *Admin) RevokeGrant(ctx context.Context, id, by, reason string) error {
	return ad.ad.RevokeGrant(ctx, id, by, reason)
}

// List pages through the tickets matching f, newest state as stored. Pass
// the returned cursor as f.After for the next page; "" means the last.
func (ad *Admin) List(ctx context.Context, f store.Filter) ([]plug.Entry, string, error) {
	return ad.ad.List(ctx, f)
}

// Metrics returns the approval figures of the last window of the audit
// chain, by the store's clock (at most [MaxMetricsWindow]; zero means a
// week): per effect class and per approver, the approval rate, median and
// p90 time to decision, approvals per active hour, and the rubber-stamp
// warnings of figures.Compute. They show when a control has become a
// habit: an approval rate near 100% with decisions in a few seconds.
func (ad *Admin) Metrics(ctx context.Context, window time.Duration) (figures.Report, error) {
	return ad.ad.Metrics(ctx, window)
}

// Checkpoint signs the audit chain's head as it stands, with key (the
// gate's checkpoint key, ed25519): its sequence number, hash and time. A
// third party holding the public key then verifies an export that starts
// anywhere after it (audit.VerifyChainFrom, the verify CLI's
// --checkpoint), and notices records deleted from the start of a chain.
// Publish checkpoints where the database's writers cannot rewrite them.
func (ad *Admin) Checkpoint(ctx context.Context, key ed25519.PrivateKey) (audit.SignedCheckpoint, error) {
	return ad.ad.Checkpoint(ctx, key)
}
