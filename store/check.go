package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// Size bounds. A record with a larger field is refused with [ErrTooLarge]
// before anything is written.
const (
	// MaxFieldSize bounds each blob and free-text field but the effect
	// and the card: Evidence, Result, Rationale, Reason, a grant's Spec, a
	// credential's PublicKey, an audit record's Args. It is
	// [canon.MaxText]; the effect is bounded by [canon.MaxEffect] and the
	// card by [canon.MaxCard], so that whatever a gate seals and renders
	// its store keeps.
	MaxFieldSize = canon.MaxText
	// MaxKeySize bounds each identifier: ids, idempotency keys, sessions,
	// users, tasks, steps, tools, counter keys, and each taint label.
	MaxKeySize = 1 << 10
	// MaxTaint bounds the number of taint labels on a ticket.
	MaxTaint = 256
)

// Check reports whether a may be parked: State empty or [Pending], or
// [Approved] with an Approver (a call allowed by policy or a grant, stored
// approved in one step); a non-empty canonical Effect whose canon.Sum is
// Digest, CreatedAt set and ExpiresAt in a later microsecond, a non-empty
// Session and User, nothing consumed, merged or executed yet, every text
// field valid UTF-8, and every field within the size bounds. A pending
// ticket carries no decision; an approved one may carry Reason, Evidence
// and a ResolvedAt not before CreatedAt (zero means CreatedAt). Backends
// call it first in Park and ParkGranted.
func (a Approval) Check() error {
	if err := a.checkSizes(); err != nil {
		return err
	}
	switch {
	case a.State != "" && a.State != Pending && a.State != Approved:
		return fmt.Errorf("%w: a new ticket must be pending or approved", ErrInvalid)
	case len(a.Effect) == 0:
		return fmt.Errorf("%w: empty effect", ErrInvalid)
	case !canon.Sum(a.Effect).Equal(a.Digest):
		return fmt.Errorf("%w: digest does not match effect", ErrInvalid)
	case a.CreatedAt.IsZero() || !a.ExpiresAt.Truncate(time.Microsecond).After(a.CreatedAt.Truncate(time.Microsecond)):
		// Compared as stored: backends keep microseconds.
		return fmt.Errorf("%w: expiry must follow creation", ErrInvalid)
	case a.Session == "" || a.User == "":
		return fmt.Errorf("%w: session and user are required", ErrInvalid)
	case !a.validUTF8():
		return fmt.Errorf("%w: text field is not UTF-8", ErrInvalid)
	case a.Merged != 0 || a.IdempotencyKey != "" || !a.ConsumedAt.IsZero() || a.Owner != "" || a.Fence != 0 ||
		!a.LeaseUntil.IsZero() || a.Result != nil || !a.FinishedAt.IsZero():
		return fmt.Errorf("%w: a new ticket has no execution", ErrInvalid)
	case a.State == Approved && a.Approver == "":
		return fmt.Errorf("%w: an approved ticket names its approver", ErrInvalid)
	case a.State == Approved && !a.ResolvedAt.IsZero() && a.ResolvedAt.Before(a.CreatedAt):
		return fmt.Errorf("%w: approval before creation", ErrInvalid)
	case a.State != Approved && (a.Approver != "" || a.Reason != "" || !a.ResolvedAt.IsZero() || a.Evidence != nil):
		return fmt.Errorf("%w: a pending ticket has no decision", ErrInvalid)
	case len(a.Votes) != 0 || !a.ShownAt.IsZero():
		return fmt.Errorf("%w: a new ticket has no votes and was never shown", ErrInvalid)
	case (a.EscalatesTo == "") != a.EscalatesAt.IsZero():
		return fmt.Errorf("%w: an escalation names both its group and its time", ErrInvalid)
	}
	return nil
}

// validUTF8 reports whether every text field of a is UTF-8. The audit
// records made from a ticket hash only UTF-8 text, and encoding/json (the
// SQLite backend's encoding of lists) would rewrite other text as U+FFFD.
func (a Approval) validUTF8() bool {
	strs := []string{a.ID, a.Tool, a.EffectClass, a.User, a.Session, a.Task, a.Step, a.PolicyVersion,
		a.Rationale, a.Approvers, a.EscalatesTo, a.Approver, a.Reason, a.IdempotencyKey, a.Owner, a.Requester.User,
		a.Requester.Agent}
	strs = append(append(strs, a.Taint...), a.Requester.Delegations...)
	for _, s := range strs {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func (a Approval) checkSizes() error {
	for _, k := range []string{a.ID, a.Tool, a.EffectClass, a.User, a.Session, a.Task, a.Step,
		a.PolicyVersion, a.Approvers, a.EscalatesTo, a.Approver, a.IdempotencyKey, a.Owner, a.Requester.User,
		a.Requester.Agent} {
		if len(k) > MaxKeySize {
			return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
		}
	}
	if len(a.Taint) > MaxTaint || len(a.Requester.Delegations) > MaxTaint {
		return fmt.Errorf("%w: more than %d labels", ErrTooLarge, MaxTaint)
	}
	for _, lists := range [][]string{a.Taint, a.Requester.Delegations} {
		for _, k := range lists {
			if len(k) > MaxKeySize {
				return fmt.Errorf("%w: label over %d bytes", ErrTooLarge, MaxKeySize)
			}
		}
	}
	switch {
	case len(a.Effect) > canon.MaxEffect:
		return fmt.Errorf("%w: effect over %d bytes", ErrTooLarge, canon.MaxEffect)
	case len(a.Card) > canon.MaxCard:
		return fmt.Errorf("%w: card over %d bytes", ErrTooLarge, canon.MaxCard)
	}
	for _, n := range []int{len(a.Evidence), len(a.Result), len(a.Rationale), len(a.Reason)} {
		if n > MaxFieldSize {
			return fmt.Errorf("%w: field over %d bytes", ErrTooLarge, MaxFieldSize)
		}
	}
	return nil
}

// Check reports whether r is a decision Resolve accepts: To one of
// Approved, Denied, Expired, Cancelled or Revoked, At set, Approver and
// Reason valid UTF-8, fields within bounds.
func (r Resolution) Check() error {
	switch r.To {
	case Approved, Denied, Expired, Cancelled, Revoked:
	default:
		return fmt.Errorf("%w: a resolution must approve, deny, expire, cancel or revoke", ErrInvalid)
	}
	switch {
	case len(r.Approver) > MaxKeySize:
		return fmt.Errorf("%w: approver over %d bytes", ErrTooLarge, MaxKeySize)
	case len(r.Reason) > MaxFieldSize || len(r.Evidence) > MaxFieldSize:
		return fmt.Errorf("%w: field over %d bytes", ErrTooLarge, MaxFieldSize)
	case r.At.IsZero():
		return fmt.Errorf("%w: resolution time unset", ErrInvalid)
	case !utf8.ValidString(r.Approver) || !utf8.ValidString(r.Reason):
		return fmt.Errorf("%w: text field is not UTF-8", ErrInvalid)
	}
	return nil
}

// CheckVote reports whether v may be recorded by Vote towards quorum: an
// Approver within [MaxKeySize] and valid UTF-8, Evidence and reason
// within [MaxFieldSize], At set, and a quorum from 2 to [MaxQuorum].
func CheckVote(v Vote, quorum int, reason string) error {
	switch {
	case quorum < 2 || quorum > MaxQuorum:
		return fmt.Errorf("%w: a quorum is 2 to %d approvals", ErrInvalid, MaxQuorum)
	case v.Approver == "":
		return fmt.Errorf("%w: a vote names its approver", ErrInvalid)
	case len(v.Approver) > MaxKeySize:
		return fmt.Errorf("%w: approver over %d bytes", ErrTooLarge, MaxKeySize)
	case len(v.Evidence) > MaxFieldSize || len(reason) > MaxFieldSize:
		return fmt.Errorf("%w: field over %d bytes", ErrTooLarge, MaxFieldSize)
	case v.At.IsZero():
		return fmt.Errorf("%w: vote time unset", ErrInvalid)
	case !utf8.ValidString(v.Approver) || !utf8.ValidString(reason):
		return fmt.Errorf("%w: text field is not UTF-8", ErrInvalid)
	}
	return nil
}

// CheckConsume reports whether c may be recorded by Consume: a non-empty
// Key and what [Claim.Check] asks.
func CheckConsume(c Claim) error {
	if c.Key == "" {
		return fmt.Errorf("%w: idempotency key required", ErrInvalid)
	}
	return c.Check()
}

// Check reports whether c may be recorded by Reclaim: an Owner, a Key
// (empty allowed: Reclaim keeps the stored one) and Owner within
// [MaxKeySize] and valid UTF-8, At set and LeaseUntil in a later
// microsecond. Consume asks more: see [CheckConsume].
func (c Claim) Check() error {
	switch {
	case len(c.Key) > MaxKeySize || len(c.Owner) > MaxKeySize:
		return fmt.Errorf("%w: key or owner over %d bytes", ErrTooLarge, MaxKeySize)
	case c.Owner == "":
		return fmt.Errorf("%w: owner required", ErrInvalid)
	case !utf8.ValidString(c.Key) || !utf8.ValidString(c.Owner):
		return fmt.Errorf("%w: text field is not UTF-8", ErrInvalid)
	case c.At.IsZero() || !c.LeaseUntil.Truncate(time.Microsecond).After(c.At.Truncate(time.Microsecond)):
		return fmt.Errorf("%w: a lease must end after the claim", ErrInvalid)
	}
	return nil
}

// CheckLease reports whether Renew may be called with owner, fence and
// until: an owner within [MaxKeySize], a fence of at least 1 and a set
// time.
func CheckLease(owner string, fence int64, until time.Time) error {
	switch {
	case len(owner) > MaxKeySize:
		return fmt.Errorf("%w: owner over %d bytes", ErrTooLarge, MaxKeySize)
	case owner == "" || fence < 1 || until.IsZero():
		return fmt.Errorf("%w: lease needs owner, fence and time", ErrInvalid)
	}
	return nil
}

// Check reports whether o may be recorded by Finish: State Done, Failed or
// Abandoned, a Result within bounds and At set.
func (o Outcome) Check() error {
	switch {
	case !o.State.Ran():
		return fmt.Errorf("%w: an outcome is done, failed or abandoned", ErrInvalid)
	case len(o.Result) > MaxFieldSize:
		return fmt.Errorf("%w: result over %d bytes", ErrTooLarge, MaxFieldSize)
	case o.At.IsZero():
		return fmt.Errorf("%w: finish time unset", ErrInvalid)
	}
	return nil
}

// Check reports whether f may be listed: valid States, a Limit not below
// zero, identifiers within [MaxKeySize].
func (f Filter) Check() error {
	if len(f.States) > 16 {
		return fmt.Errorf("%w: too many states", ErrInvalid)
	}
	for _, s := range f.States {
		if !s.Valid() {
			return fmt.Errorf("%w: unknown state", ErrInvalid)
		}
	}
	for _, k := range []string{f.User, f.Session, f.Approvers, f.After} {
		if len(k) > MaxKeySize {
			return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
		}
	}
	if f.Limit < 0 {
		return fmt.Errorf("%w: negative limit", ErrInvalid)
	}
	return nil
}

// CheckTime reports whether at, the time of a revocation, redemption or
// similar, is set.
func CheckTime(at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("%w: time unset", ErrInvalid)
	}
	return nil
}

// CheckSkew fails with [ErrClockSkew] when at, a time a caller gave a
// deciding method, differs from now, the store's clock read inside the
// transaction, by more than [MaxSkew]. The error names neither time.
func CheckSkew(at, now time.Time) error {
	d := at.Sub(now)
	if d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w by more than %v", ErrClockSkew, MaxSkew)
	}
	return nil
}

// Check reports whether c may be stored: an ID, a user and a PublicKey,
// fields within bounds, not revoked.
func (c Credential) Check() error {
	switch {
	case len(c.ID) == 0 || len(c.PublicKey) == 0 || c.User == "":
		return fmt.Errorf("%w: credential needs id, user and public key", ErrInvalid)
	case len(c.ID) > MaxKeySize || len(c.User) > MaxKeySize || len(c.AAGUID) > MaxKeySize || len(c.Seal) > MaxKeySize:
		return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
	case len(c.PublicKey) > MaxFieldSize:
		return fmt.Errorf("%w: public key over %d bytes", ErrTooLarge, MaxFieldSize)
	case !c.RevokedAt.IsZero():
		return fmt.Errorf("%w: a new credential is not revoked", ErrInvalid)
	}
	return nil
}

// Check reports whether inv may be stored: a non-zero TokenHash, a user,
// an expiry, neither redeemed nor revoked.
func (inv Invite) Check() error {
	switch {
	case inv.TokenHash == [32]byte{} || inv.User == "" || inv.ExpiresAt.IsZero():
		return fmt.Errorf("%w: invite needs token hash, user and expiry", ErrInvalid)
	case !inv.RedeemedAt.IsZero() || !inv.RevokedAt.IsZero():
		return fmt.Errorf("%w: a new invite is neither redeemed nor revoked", ErrInvalid)
	case len(inv.User) > MaxKeySize:
		return fmt.Errorf("%w: user over %d bytes", ErrTooLarge, MaxKeySize)
	}
	return nil
}

// Check reports whether g may be stored: an ID, a user, an expiry, a
// Remaining count not below zero, a Spec that is valid JSON within bounds,
// not revoked.
func (g Grant) Check() error {
	switch {
	case len(g.ID) > MaxKeySize || len(g.User) > MaxKeySize:
		return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
	case len(g.Spec) > MaxFieldSize:
		return fmt.Errorf("%w: spec over %d bytes", ErrTooLarge, MaxFieldSize)
	case g.ID == "" || g.User == "" || g.ExpiresAt.IsZero() || g.Remaining < 0:
		return fmt.Errorf("%w: grant needs id, user, expiry and remaining uses", ErrInvalid)
	case !json.Valid(g.Spec):
		return fmt.Errorf("%w: spec is not JSON", ErrInvalid)
	case !g.RevokedAt.IsZero():
		return fmt.Errorf("%w: a new grant is not revoked", ErrInvalid)
	}
	return nil
}

// CheckKey reports whether key names a counter or streak: non-empty, within
// [MaxKeySize].
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalid)
	case len(key) > MaxKeySize:
		return fmt.Errorf("%w: key over %d bytes", ErrTooLarge, MaxKeySize)
	}
	return nil
}

// CheckAudit reports whether r may be appended: Args within bounds and
// valid JSON when present, a decision, identifiers within bounds.
func CheckAudit(r audit.Record) error {
	for _, k := range []string{r.TicketID, r.Task, r.Step, r.Session, r.Tool, r.EffectClass,
		r.PolicyVersion, r.Decision, r.Approver, r.Nonce, r.CardHash, r.IdempotencyKey} {
		if len(k) > MaxKeySize {
			return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
		}
	}
	switch {
	case len(r.Args) > MaxFieldSize || len(r.Reason) > MaxFieldSize || len(r.Result) > MaxFieldSize:
		return fmt.Errorf("%w: field over %d bytes", ErrTooLarge, MaxFieldSize)
	case len(r.Taint) > MaxTaint:
		return fmt.Errorf("%w: more than %d labels", ErrTooLarge, MaxTaint)
	case r.Decision == "":
		return fmt.Errorf("%w: audit record needs a decision", ErrInvalid)
	case len(bytes.TrimSpace(r.Args)) > 0 && !json.Valid(r.Args):
		return fmt.Errorf("%w: args are not JSON", ErrInvalid)
	}
	return nil
}

// CheckPrune reports whether a prune's arguments are well formed, and
// returns its limit with 0 taken as [MaxPruneKeys].
func CheckPrune(prefix string, before time.Time, limit int) (int, error) {
	switch {
	case prefix == "":
		return 0, fmt.Errorf("%w: prune: empty prefix", ErrInvalid)
	case len(prefix) > MaxKeySize:
		return 0, fmt.Errorf("%w: prune: prefix over %d bytes", ErrTooLarge, MaxKeySize)
	case before.IsZero():
		return 0, fmt.Errorf("%w: prune: time unset", ErrInvalid)
	case limit < 0 || limit > MaxPruneKeys:
		return 0, fmt.Errorf("%w: prune: limit %d outside 0 to %d", ErrInvalid, limit, MaxPruneKeys)
	case limit == 0:
		return MaxPruneKeys, nil
	}
	return limit, nil
}

// PrefixEnd returns the least string above every string that starts with
// prefix, in byte order, for a range scan: "flood/" gives "flood0". It
// returns "" when there is none (prefix all 0xff bytes).
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
