package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentstepup/asu/store"
)

// Show implements [store.Votes]. A ticket's ShownAt never changes once
// set, so a ticket already shown is answered by a read; only the first
// showing takes the write lock, and its commit does not wait for the
// disk (see Durability in the package doc). The first read takes only
// shown_at, and the write returns the ticket it changed, so a first
// showing reads the whole ticket once.
func (s *Store) Show(ctx context.Context, id string, at time.Time) (store.Approval, error) {
	if err := store.CheckTime(at); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: show: %w", err)
	}
	if err := s.enter(ctx, "show"); err != nil {
		return store.Approval{}, err
	}
	var shown sql.NullInt64
	err := s.reader().QueryRowContext(ctx, `SELECT shown_at FROM approvals WHERE id = ?`, id).Scan(&shown)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Approval{}, fmt.Errorf("sqlite: show: %w", store.ErrNotFound)
	case err != nil:
		return store.Approval{}, s.fail(ctx, "show", err)
	case shown.Valid:
		a, err := getApproval(ctx, s.reader(), id)
		if errors.Is(err, store.ErrNotFound) {
			return store.Approval{}, fmt.Errorf("sqlite: show: %w", err)
		}
		if err != nil {
			return store.Approval{}, s.fail(ctx, "show", err)
		}
		return a, nil
	}
	var a store.Approval
	err = s.writeRelaxed(ctx, "show", func(tx runner) error {
		// Another showing may have come first: the first one counts.
		a, err = scanApproval(tx.QueryRowContext(ctx, `UPDATE approvals SET shown_at = coalesce(shown_at, ?)
			WHERE id = ? RETURNING `+approvalCols, at.UnixMicro(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		return dbErr(err)
	})
	if err != nil {
		return store.Approval{}, err
	}
	return a, nil
}

// Vote implements [store.Votes]. The transaction holds SQLite's write lock
// from its first read (BEGIN IMMEDIATE), across processes too, so the
// tally it reads is the one it extends: of two votes at once, the second
// sees the first.
func (s *Store) Vote(ctx context.Context, id string, v store.Vote, quorum int, reason string, note store.Note) (store.Approval, error) {
	if err := store.CheckVote(v, quorum, reason); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: vote: %w", err)
	}
	at := v.At.UnixMicro()
	var out store.Approval
	err := s.write(ctx, "vote", func(tx runner) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.State != store.Pending {
			return store.ErrResolved
		}
		if err := s.skew(v.At); err != nil {
			return err
		}
		if at >= cur.ExpiresAt.UnixMicro() {
			return store.ErrExpired
		}
		for _, w := range cur.Votes {
			if w.Approver == v.Approver {
				return store.ErrDuplicate
			}
		}
		votes, err := encodeVotes(append(cur.Votes, v))
		if err != nil {
			return err
		}
		var n int64
		if len(cur.Votes)+1 >= quorum {
			n, err = tx.changes(ctx, `UPDATE approvals
				SET votes = ?, state = 'approved', approver = ?, reason = ?, evidence = NULL, resolved_at = ?
				WHERE id = ? AND state = 'pending'`, votes, v.Approver, reason, at, id)
		} else {
			// The next approver is shown the card anew.
			n, err = tx.changes(ctx, `UPDATE approvals SET votes = ?, shown_at = NULL WHERE id = ? AND state = 'pending'`, votes, id)
		}
		switch {
		case err != nil:
			return err
		case n == 0:
			// The write lock makes this unreachable; refuse rather than
			// note a change that was not made.
			return store.ErrResolved
		}
		out, err = s.ticketNote(ctx, tx, id, note, false)
		return err
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// voteJSON is one element of the votes column.
type voteJSON struct {
	Approver string `json:"approver"`
	Evidence []byte `json:"evidence,omitempty"`
	At       int64  `json:"at"` // Unix microseconds
}

// encodeVotes returns votes as the votes column stores them: NULL for
// none, else a JSON array in the order given.
func encodeVotes(votes []store.Vote) (any, error) {
	if len(votes) == 0 {
		return nil, nil
	}
	out := make([]voteJSON, len(votes))
	for i, v := range votes {
		// encoding/json would rewrite other text as U+FFFD.
		if !utf8.ValidString(v.Approver) {
			return nil, fmt.Errorf("%w: approver is not UTF-8", store.ErrInvalid)
		}
		out[i] = voteJSON{Approver: v.Approver, Evidence: v.Evidence, At: v.At.UnixMicro()}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: votes", store.ErrInvalid)
	}
	return string(b), nil
}

// decodeVotes reads what encodeVotes wrote.
func decodeVotes(col sql.NullString) ([]store.Vote, error) {
	if !col.Valid {
		return nil, nil
	}
	var in []voteJSON
	if err := json.Unmarshal([]byte(col.String), &in); err != nil {
		return nil, fmt.Errorf("corrupt ticket row: votes")
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]store.Vote, len(in))
	for i, v := range in {
		out[i] = store.Vote{Approver: v.Approver, Evidence: v.Evidence, At: time.UnixMicro(v.At).UTC()}
	}
	return out, nil
}
