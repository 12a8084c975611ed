package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

const grantCols = `id, user, spec, remaining, created_at, expires_at`

func scanGrant(row scanner) (store.Grant, error) {
	var (
		g                store.Grant
		created, expires sql.NullInt64
	)
	if err := row.Scan(&g.ID, &g.User, &g.Spec, &g.Remaining, &created, &expires); err != nil {
		return store.Grant{}, err
	}
	g.CreatedAt, g.ExpiresAt = fromMicros(created), fromMicros(expires)
	return g, nil
}

func getGrant(ctx context.Context, q querier, id string) (store.Grant, error) {
	g, err := scanGrant(q.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Grant{}, store.ErrNotFound
	}
	return g, dbErr(err)
}

// PutGrant implements [store.Grants].
func (s *Store) PutGrant(ctx context.Context, g store.Grant) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("sqlite: put grant: %w", err)
	}
	return s.write(ctx, "put grant", func(tx runner) error {
		n, err := tx.changes(ctx, `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, g.ID, g.User, g.Spec, g.Remaining, micros(g.CreatedAt), g.ExpiresAt.UnixMicro())
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrDuplicate
		}
		return nil
	})
}

// GetGrant implements [store.Grants].
func (s *Store) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	if err := s.enter(ctx, "get grant"); err != nil {
		return store.Grant{}, err
	}
	g, err := getGrant(ctx, s.reader(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Grant{}, fmt.Errorf("sqlite: get grant: %w", err)
	}
	if err != nil {
		return store.Grant{}, s.fail(ctx, "get grant", err)
	}
	return g, nil
}

// UseGrant implements [store.Grants].
func (s *Store) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	var out store.Grant
	err := s.write(ctx, "use grant", func(tx runner) error {
		n, err := tx.changes(ctx, `UPDATE grants SET remaining = remaining - 1
			WHERE id = ? AND expires_at > ? AND remaining > 0`, id, at.UnixMicro())
		if err != nil {
			return err
		}
		out, err = getGrant(ctx, tx, id)
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		if !at.Before(out.ExpiresAt) {
			return store.ErrExpired
		}
		return store.ErrGrantUsedUp
	})
	if err != nil {
		return store.Grant{}, err
	}
	return out, nil
}
