package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// MarkEarly implements [store.Early]: the count and the insert share the
// write lock, so a ticket never holds more than [store.MaxEarly] marks.
func (s *Store) MarkEarly(ctx context.Context, id string, key [32]byte, until time.Time) error {
	if err := store.CheckEarly(id, until); err != nil {
		return fmt.Errorf("sqlite: mark early: %w", err)
	}
	return s.write(ctx, "mark early", func(tx runner) error {
		var marked, n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(hash = ?), 0) FROM early_answers WHERE ticket_id = ?`,
			key[:], id).Scan(&n, &marked); err != nil {
			return err
		}
		switch {
		case marked > 0:
			return nil
		case n >= store.MaxEarly:
			return fmt.Errorf("%w: %d answers refused as too soon", store.ErrTooLarge, store.MaxEarly)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO early_answers (ticket_id, hash, expires_at) VALUES (?, ?, ?)`,
			id, key[:], until.UnixMicro())
		return err
	})
}

// WasEarly implements [store.Early].
func (s *Store) WasEarly(ctx context.Context, id string, key [32]byte) (bool, error) {
	if err := s.enter(ctx, "was early"); err != nil {
		return false, err
	}
	var n int
	if err := s.reader().QueryRowContext(ctx, `SELECT count(*) FROM early_answers WHERE ticket_id = ? AND hash = ?`,
		id, key[:]).Scan(&n); err != nil {
		return false, s.fail(ctx, "was early", err)
	}
	return n > 0, nil
}
