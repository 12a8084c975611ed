package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// queryMarkEarly inserts a mark unless the ticket $1 already has
// store.MaxEarly of them. Two marks of one ticket at once may both read
// MaxEarly-1: the bound is exceeded by at most the replicas' number.
var queryMarkEarly = fmt.Sprintf(`INSERT INTO early_answers (ticket_id, hash, expires_at)
	SELECT $1, $2, $3 WHERE (SELECT count(*) FROM early_answers WHERE ticket_id = $1) < %d
	ON CONFLICT DO NOTHING`, store.MaxEarly)

// MarkEarly implements [store.Early].
func (s *Store) MarkEarly(ctx context.Context, id string, key [32]byte, until time.Time) error {
	const op = "mark early"
	if err := store.CheckEarly(id, until); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	tag, err := s.pool.Exec(ctx, queryMarkEarly, id, key[:], until)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	marked, err := s.WasEarly(ctx, id, key)
	switch {
	case err != nil:
		return err
	case !marked:
		return fmt.Errorf("%s: %w: %d answers refused as too soon", op, store.ErrTooLarge, store.MaxEarly)
	}
	return nil
}

// WasEarly implements [store.Early].
func (s *Store) WasEarly(ctx context.Context, id string, key [32]byte) (bool, error) {
	const op = "was early"
	if err := s.enter(ctx); err != nil {
		return false, s.fail(ctx, op, err)
	}
	var marked bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM early_answers WHERE ticket_id = $1 AND hash = $2)`,
		id, key[:]).Scan(&marked); err != nil {
		return false, s.fail(ctx, op, err)
	}
	return marked, nil
}
