package store

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxQueueGroups bounds [QueueFilter].Groups: an approver is in at most
// this many approver groups as far as one queue read is concerned.
const MaxQueueGroups = 64

// QueueFilter selects the candidates of an approver's queue, as far as a
// store can tell them: pending tickets expiring after Now whose user is
// User or that were routed to one of Groups, soonest expiry first. The
// gate then keeps, of the page, those its policy and the tickets' votes
// say the approver may decide now; the store reads no more than a page.
type QueueFilter struct {
	User   string    // tickets of this user (the approver's own agents), whatever their route
	Groups []string  // and tickets routed to any of these approver groups ([Approval].Approvers), or escalated to one by Now ([Approval].EscalatesTo)
	Now    time.Time // only tickets whose ExpiresAt is after Now
	// Limit is the page size: 0 means [DefaultListLimit], more than
	// [MaxListLimit] means MaxListLimit.
	Limit int
	// After is the cursor: the last ID of the previous page, "" for the
	// first page.
	After string
}

// PageSize returns the number of tickets a page of q holds.
func (q QueueFilter) PageSize() int { return Filter{Limit: q.Limit}.PageSize() }

// Check reports whether q is well formed: a time, a user or a group,
// bounded identifiers and a non-negative limit.
func (q QueueFilter) Check() error {
	switch {
	case q.Now.IsZero():
		return fmt.Errorf("%w: queue: time unset", ErrInvalid)
	case q.User == "" && len(q.Groups) == 0:
		return fmt.Errorf("%w: queue: no user and no group", ErrInvalid)
	case len(q.Groups) > MaxQueueGroups:
		return fmt.Errorf("%w: queue: over %d groups", ErrInvalid, MaxQueueGroups)
	case q.Limit < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalid)
	}
	for _, k := range append([]string{q.User, q.After}, q.Groups...) {
		if len(k) > MaxKeySize {
			return fmt.Errorf("%w: identifier over %d bytes", ErrTooLarge, MaxKeySize)
		}
	}
	for _, g := range q.Groups {
		if g == "" {
			return fmt.Errorf("%w: queue: empty group name", ErrInvalid)
		}
	}
	return nil
}

// InQueue reports whether a is a candidate of q's queue, after the
// cursor's ticket (by ExpiresAt, then ID) when after is set.
func (q QueueFilter) InQueue(a *Approval, after *Approval) bool {
	if a.State != Pending || !q.Now.Before(a.ExpiresAt) {
		return false
	}
	if after != nil && QueueOrder(a, after) <= 0 {
		return false
	}
	return (q.User != "" && a.User == q.User) || (a.Approvers != "" && slices.Contains(q.Groups, a.Approvers)) ||
		(a.EscalatesTo != "" && !q.Now.Before(a.EscalatesAt) && slices.Contains(q.Groups, a.EscalatesTo))
}

// QueueOrder orders tickets as a queue lists them: soonest expiry first,
// then by ID.
func QueueOrder(a, b *Approval) int {
	if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// MergeQueue merges pages already in [QueueOrder] into one, each ticket
// once, and cuts it to q's page size: it returns the page and the cursor
// of the next one (its last ID, or "" when no candidate follows). Every
// source page must hold PageSize()+1 tickets when more follow, so that
// the merge can tell whether a next page exists. Backends that read one
// index range per source (the user, each group) use it.
func (q QueueFilter) MergeQueue(sources ...[]Approval) ([]Approval, string) {
	var all []Approval
	for _, s := range sources {
		all = append(all, s...)
	}
	slices.SortFunc(all, func(a, b Approval) int { return QueueOrder(&a, &b) })
	all = slices.CompactFunc(all, func(a, b Approval) bool { return a.ID == b.ID })
	n := q.PageSize()
	if len(all) > n {
		return all[:n], all[n-1].ID
	}
	return all, ""
}
