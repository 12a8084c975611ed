package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

const grantColumns = `id, user_name, spec, remaining, created_at, expires_at`

func scanGrant(row pgx.Row) (store.Grant, error) {
	var (
		g                store.Grant
		created, expires pgtype.Timestamptz
	)
	if err := row.Scan(&g.ID, &g.User, &g.Spec, &g.Remaining, &created, &expires); err != nil {
		return store.Grant{}, err
	}
	g.CreatedAt, g.ExpiresAt = fromTS(created), fromTS(expires)
	return g, nil
}

// PutGrant implements [store.Grants].
func (s *Store) PutGrant(ctx context.Context, g store.Grant) error {
	const op = "put grant"
	if err := g.Check(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO grants (`+grantColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		g.ID, g.User, g.Spec, g.Remaining, ts(g.CreatedAt), g.ExpiresAt)
	return s.fail(ctx, op, err)
}

// GetGrant implements [store.Grants].
func (s *Store) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	const op = "get grant"
	if err := s.enter(ctx); err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantColumns+` FROM grants WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	return g, nil
}

// UseGrant implements [store.Grants] with one conditional UPDATE: the
// decrement and the check that a use remains are the same statement, so
// concurrent replicas together take exactly the remaining uses.
func (s *Store) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	const op = "use grant"
	if err := s.enter(ctx); err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, `UPDATE grants SET remaining = remaining - 1
		WHERE id = $1 AND expires_at > $2 AND remaining > 0
		RETURNING `+grantColumns, id, at))
	if errors.Is(err, pgx.ErrNoRows) {
		var expired bool
		err = s.pool.QueryRow(ctx, `SELECT expires_at <= $2 FROM grants WHERE id = $1`, id, at).Scan(&expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = store.ErrNotFound
		case err == nil && expired:
			err = store.ErrExpired
		case err == nil:
			err = store.ErrGrantUsedUp
		}
	}
	if err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	return g, nil
}
