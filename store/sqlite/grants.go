package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

const grantCols = `id, user, spec, remaining, created_at, expires_at, revoked_at`

func scanGrant(row scanner) (store.Grant, error) {
	var (
		g                         store.Grant
		created, expires, revoked sql.NullInt64
	)
	if err := row.Scan(&g.ID, &g.User, &g.Spec, &g.Remaining, &created, &expires, &revoked); err != nil {
		return store.Grant{}, err
	}
	g.CreatedAt, g.ExpiresAt, g.RevokedAt = fromMicros(created), fromMicros(expires), fromMicros(revoked)
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
		n, err := tx.changes(ctx, `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, NULL)
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
	if err := s.enterRead(ctx, "get grant"); err != nil {
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
	if err := store.CheckTime(at); err != nil {
		return store.Grant{}, fmt.Errorf("sqlite: use grant: %w", err)
	}
	var out store.Grant
	err := s.write(ctx, "use grant", func(tx runner) error {
		var err error
		out, err = s.useGrant(ctx, tx, id, at)
		return err
	})
	if err != nil {
		return store.Grant{}, err
	}
	return out, nil
}

// useGrant takes one use of grant id at at, inside tx, and returns the
// grant after it.
func (s *Store) useGrant(ctx context.Context, tx runner, id string, at time.Time) (store.Grant, error) {
	g, err := getGrant(ctx, tx, id)
	if err != nil {
		return store.Grant{}, err
	}
	if err := s.skew(at); err != nil {
		return store.Grant{}, err
	}
	switch {
	case !g.RevokedAt.IsZero():
		return store.Grant{}, store.ErrRevoked
	case at.UnixMicro() >= g.ExpiresAt.UnixMicro():
		return store.Grant{}, store.ErrExpired
	case g.Remaining <= 0:
		return store.Grant{}, store.ErrGrantUsedUp
	}
	// The conditions again in the update, which is what decides.
	n, err := tx.changes(ctx, `UPDATE grants SET remaining = remaining - 1
		WHERE id = ? AND revoked_at IS NULL AND expires_at > ? AND remaining > 0`, id, at.UnixMicro())
	if err != nil {
		return store.Grant{}, err
	}
	if n == 0 {
		return store.Grant{}, store.ErrGrantUsedUp
	}
	g.Remaining--
	return g, nil
}

// RevokeGrant implements [store.Grants].
func (s *Store) RevokeGrant(ctx context.Context, id string, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("sqlite: revoke grant: %w", err)
	}
	return s.write(ctx, "revoke grant", func(tx runner) error {
		g, err := getGrant(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case !g.RevokedAt.IsZero():
			return store.ErrRevoked
		}
		if _, err := tx.ExecContext(ctx, `UPDATE grants SET revoked_at = ? WHERE id = ?`, at.UnixMicro(), id); err != nil {
			return dbErr(err)
		}
		return s.note(ctx, tx, note, store.Approval{}, false)
	})
}

// ParkGranted implements [store.Grants].
func (s *Store) ParkGranted(ctx context.Context, a store.Approval, grantID string, note store.Note) (store.Approval, store.Grant, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("sqlite: park granted: %w", err)
	}
	if a.State != store.Approved {
		return store.Approval{}, store.Grant{}, fmt.Errorf("sqlite: park granted: %w: a granted ticket is approved", store.ErrInvalid)
	}
	requester, taint, err := encodeLists(a)
	if err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("sqlite: park granted: %w", err)
	}
	var (
		out store.Approval
		g   store.Grant
	)
	err = s.write(ctx, "park granted", func(tx runner) error {
		var err error
		if g, err = s.useGrant(ctx, tx, grantID, a.CreatedAt); err != nil {
			return err
		}
		out, err = s.insertNoted(ctx, tx, a, requester, taint, note)
		return err
	})
	if err != nil {
		return store.Approval{}, store.Grant{}, err
	}
	return out, g, nil
}
