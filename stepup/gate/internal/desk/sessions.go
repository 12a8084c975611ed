package desk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/store"
)

// Sign-outs of the sessions of sites beside the gate (package inbox's)
// are kept in the store's counters, so that every replica sharing the
// store sees them, with no method or table of their own: the key names
// the session, the window is when the session would have ended, fixed by
// the session itself so every replica asks about the same window, and a
// count above zero means ended. Nothing else adds to such a key, so the
// count only grows. [core.Gate.Prune] deletes a sign-out once its
// session has been over for a day.

// endedPrefix starts the key of every sign-out (core.SessionsEnded).
const endedPrefix = core.SessionsEnded

// endedTag separates the hash of a session id from every other hash.
const endedTag = "asu/v1/session-ended\x00"

// Bounds of a session id: a random id of at least 128 bits, and at most
// a store key's size.
const (
	minSessionID = 16
	maxSessionID = store.MaxKeySize
)

// EndSession implements [gate.Desk.EndSession].
func (d *Desk) EndSession(ctx context.Context, id []byte, until time.Time) error {
	c, key, window, err := d.ended(id, until)
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	// A sign-out whose request is cancelled midway is still recorded.
	if _, err := c.AddCount(context.WithoutCancel(ctx), key, window, 1); err != nil {
		return fmt.Errorf("end session: %w: %w", stepup.ErrStore, err)
	}
	return nil
}

// SessionEnded implements [gate.Desk.SessionEnded].
func (d *Desk) SessionEnded(ctx context.Context, id []byte, until time.Time) (bool, error) {
	c, key, window, err := d.ended(id, until)
	if err != nil {
		return false, fmt.Errorf("session ended: %w", err)
	}
	n, err := c.AddCount(ctx, key, window, 0) // a read: changes nothing
	if err != nil {
		return false, fmt.Errorf("session ended: %w: %w", stepup.ErrStore, err)
	}
	return n > 0, nil
}

// ended returns the counters, key and window of the sign-out of session
// id, which would have ended at until.
func (d *Desk) ended(id []byte, until time.Time) (store.Counters, string, time.Time, error) {
	switch {
	case len(id) < minSessionID || len(id) > maxSessionID:
		return nil, "", time.Time{}, fmt.Errorf("%w: a session id is %d to %d random bytes", stepup.ErrConfig, minSessionID, maxSessionID)
	case until.IsZero():
		return nil, "", time.Time{}, fmt.Errorf("%w: a session ends at some time", stepup.ErrConfig)
	}
	c, ok := d.g.core.St().(store.Counters)
	if !ok {
		return nil, "", time.Time{}, fmt.Errorf("%w: the gate's store keeps no counters to record sign-outs in", stepup.ErrConfig)
	}
	h := sha256.New()
	h.Write([]byte(endedTag))
	h.Write(id)
	// To the second, in UTC: every backend keeps it exactly, and a
	// session cookie carries no finer time.
	return c, endedPrefix + hex.EncodeToString(h.Sum(nil)), time.Unix(until.Unix(), 0).UTC(), nil
}
