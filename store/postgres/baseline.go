package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Baseline runs one empty transaction (BEGIN; COMMIT) on a pooled
// connection: the floor under every state change, which benchmarks
// measure next to the real operations.
func (s *Store) Baseline(ctx context.Context) error {
	const op = "baseline"
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	return s.fail(ctx, op, pgx.BeginFunc(ctx, s.pool, func(pgx.Tx) error { return nil }))
}
