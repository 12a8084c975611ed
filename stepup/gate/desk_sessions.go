package gate

import (
	"context"
	"time"
)

// EndSession records that an approver's session on a site beside the
// gate (package inbox's) has ended, signed out, for every replica that
// shares the gate's store: from then on [Desk.SessionEnded] reports it
// ended on any of them, and after a restart. id is the session's own
// random id, 16 to 1024 bytes (the store keeps only its hash); until is
// when the session would have ended anyway, kept to the second, and
// SessionEnded must be asked with the same until: a site passes the
// expiry its session cookie carries under its MAC, so every replica asks
// about the same record. Ending a session again is no error.
//
// The record lives in the store's counters ([store.Counters], under a key
// no flood count uses), so no store method or table of its own is needed;
// a store that keeps no counters fails with [stepup.ErrConfig]. It is
// written as a flood count is: durable with the next durable commit on
// the store (see Durability in package store). A failure wraps
// [stepup.ErrStore], and then the session is not known to have ended
// anywhere but where the caller remembers it: tell the approver.
func (d *Desk) EndSession(ctx context.Context, id []byte, until time.Time) error {
	return d.d.EndSession(ctx, id, until)
}

// SessionEnded reports whether [Desk.EndSession] recorded session id,
// with the same until, on this gate or on any replica sharing its store.
// It only reads. A failure wraps [stepup.ErrStore]: whether the session
// stands is then unknown, and the caller refuses what it would have
// allowed.
func (d *Desk) SessionEnded(ctx context.Context, id []byte, until time.Time) (bool, error) {
	return d.d.SessionEnded(ctx, id, until)
}
