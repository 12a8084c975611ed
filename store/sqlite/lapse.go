package sqlite

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/store"
)

// Reopen implements [store.Votes]. The transaction holds the write lock
// from its first read, so the approval it checks is the one it reopens:
// a Consume or a Vote of another process comes wholly before or after.
func (s *Store) Reopen(ctx context.Context, id string, l store.Lapse, note store.Note) (store.Approval, error) {
	if err := l.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: reopen: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "reopen", func(tx runner) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := reopenable(cur, l); err != nil {
			return err
		}
		if err := s.skew(l.At); err != nil {
			return err
		}
		if l.At.UnixMicro() >= cur.ExpiresAt.UnixMicro() {
			return store.ErrExpired
		}
		next := store.Lapsed(cur, l)
		votes, err := encodeVotes(next.Votes)
		if err != nil {
			return err
		}
		n, err := tx.changes(ctx, `UPDATE approvals
			SET state = 'pending', votes = ?, approver = '', reason = ?, evidence = NULL, resolved_at = NULL, shown_at = NULL
			WHERE id = ? AND state = 'approved' AND resolved_at = ?`, votes, l.Reason, id, l.ApprovedAt.UnixMicro())
		switch {
		case err != nil:
			return err
		case n == 0:
			return store.ErrNotApproved // unreachable under the write lock
		}
		out, err = s.ticketNote(ctx, tx, id, note, false)
		return err
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// reopenable says why ticket t cannot be reopened under l, or nil.
func reopenable(t store.Approval, l store.Lapse) error {
	switch t.State {
	case store.Executing, store.Done, store.Failed, store.Abandoned:
		return store.ErrConsumed
	case store.Revoked:
		return store.ErrRevoked
	case store.Approved:
		if len(t.Votes) > 0 && t.ResolvedAt.UnixMicro() == l.ApprovedAt.UnixMicro() {
			return nil
		}
	}
	return store.ErrNotApproved
}
