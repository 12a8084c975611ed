package store

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Lapse says why an approved ticket that needed several people goes back
// to pending ([Votes.Reopen]): some of the votes that approved it no
// longer count (a voter left the group, lost their passkey or was
// revoked), so fewer than the quorum stand.
type Lapse struct {
	// At is when the gate found the votes short, judged against the
	// store's clock ([MaxSkew]) and the ticket's expiry.
	At time.Time
	// ApprovedAt is the ResolvedAt of the approval the gate read: the
	// ticket reopens only while it is still that approval, so a reader
	// that read an older one never undoes a newer quorum.
	ApprovedAt time.Time
	// Keep names the approvers whose votes still count; every other vote
	// is dropped from the ticket (the audit row says why), so it can
	// never help reach the quorum again.
	Keep []string
	// Reason says why, in words for the approvers and the agent.
	Reason string
}

// Check reports whether l may be recorded by Reopen: At and ApprovedAt
// set, a Reason, and every field within its bounds.
func (l Lapse) Check() error {
	switch {
	case l.At.IsZero() || l.ApprovedAt.IsZero():
		return fmt.Errorf("%w: lapse time unset", ErrInvalid)
	case l.Reason == "":
		return fmt.Errorf("%w: a lapse says why", ErrInvalid)
	case len(l.Reason) > MaxFieldSize:
		return fmt.Errorf("%w: reason over %d bytes", ErrTooLarge, MaxFieldSize)
	case len(l.Keep) > MaxQuorum:
		return fmt.Errorf("%w: more than %d votes kept", ErrTooLarge, MaxQuorum)
	case !utf8.ValidString(l.Reason):
		return fmt.Errorf("%w: text field is not UTF-8", ErrInvalid)
	}
	for _, k := range l.Keep {
		if len(k) > MaxKeySize || !utf8.ValidString(k) {
			return fmt.Errorf("%w: kept approver", ErrInvalid)
		}
	}
	return nil
}

// Lapsed returns ticket a as Reopen stores it under l: pending again,
// with only the votes of l.Keep (in their order), Reason l.Reason, and
// no approver, evidence, decision time or showing. Backends that build
// the row in Go use it, so every backend stores the same ticket.
func Lapsed(a Approval, l Lapse) Approval {
	next := a.Clone()
	next.Votes = nil
	for _, v := range a.Votes {
		for _, k := range l.Keep {
			if v.Approver == k {
				v.Evidence = append([]byte(nil), v.Evidence...)
				next.Votes = append(next.Votes, v)
				break
			}
		}
	}
	next.State = Pending
	next.Approver = ""
	next.Reason = l.Reason
	next.Evidence = nil
	next.ResolvedAt = time.Time{}
	next.ShownAt = time.Time{} // the next approver is shown the card anew
	return next
}
