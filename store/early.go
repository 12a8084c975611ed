package store

import (
	"context"
	"fmt"
	"time"
)

// MaxEarly is how many answers refused as too soon a ticket keeps:
// [Early.MarkEarly] refuses more with [ErrTooLarge]. Only answers that
// verified are marked, so only an approver's own authenticator fills it.
const MaxEarly = 64

// Early keeps the answers refused because they came too soon after the
// card was shown, by hash, per ticket, until the ticket expires. Every
// replica sharing the store then refuses the same bytes again: resent
// once the dwell is over, such an answer would stand although nobody read
// the card for the dwell time.
type Early interface {
	// MarkEarly records that the answer hashed as key, about ticket id,
	// was refused as too soon; until is when the mark may be forgotten
	// (the ticket's expiry). Marking a key again changes nothing. It
	// fails with [ErrTooLarge] when the ticket already has [MaxEarly]
	// marks and writes no audit row.
	MarkEarly(ctx context.Context, id string, key [32]byte, until time.Time) error
	// WasEarly reports whether key was marked about ticket id.
	WasEarly(ctx context.Context, id string, key [32]byte) (bool, error)
}

// CheckEarly reports whether a mark may be recorded: a ticket id within
// [MaxKeySize] and a time.
func CheckEarly(id string, until time.Time) error {
	switch {
	case id == "" || len(id) > MaxKeySize:
		return fmt.Errorf("%w: early answer: ticket id", ErrInvalid)
	case until.IsZero():
		return fmt.Errorf("%w: early answer: time unset", ErrInvalid)
	}
	return nil
}
