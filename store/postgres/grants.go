package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

const grantColumns = `id, user_name, spec, remaining, created_at, expires_at, revoked_at`

func scanGrant(row pgx.Row) (store.Grant, error) {
	var (
		g                         store.Grant
		created, expires, revoked pgtype.Timestamptz
	)
	if err := row.Scan(&g.ID, &g.User, &g.Spec, &g.Remaining, &created, &expires, &revoked); err != nil {
		return store.Grant{}, err
	}
	g.CreatedAt, g.ExpiresAt, g.RevokedAt = fromTS(created), fromTS(expires), fromTS(revoked)
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
	_, err := s.pool.Exec(ctx, `INSERT INTO grants (id, user_name, spec, remaining, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		g.ID, g.User, g.Spec, g.Remaining, ts(g.CreatedAt), g.ExpiresAt)
	return s.fail(ctx, op, err)
}

// GetGrant implements [store.Grants].
func (s *Store) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	const op = "get grant"
	if err := s.enterRead(ctx); err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantColumns+` FROM grants WHERE id = $1`, id))
	if errNoRow(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	return g, nil
}

// UseGrant implements [store.Grants] with one conditional UPDATE: the
// decrement, the check that a use remains, the revocation and expiry
// checks and the comparison of at with the database's clock are one
// statement, so concurrent replicas together take exactly the remaining
// uses and none after a revocation.
func (s *Store) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	const op = "use grant"
	if err := store.CheckTime(at); err != nil {
		return store.Grant{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, queryUseGrant, id, at))
	if errNoRow(err) {
		err = whyNoUse(ctx, s.pool, id, at)
	}
	if err != nil {
		return store.Grant{}, s.fail(ctx, op, err)
	}
	return g, nil
}

var queryUseGrant = `UPDATE grants SET remaining = remaining - 1
	WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 AND remaining > 0 AND ` + skewOK(2) + `
	RETURNING ` + grantColumns

// whyNoUse says why queryUseGrant took no use of grant id at at.
func whyNoUse(ctx context.Context, q querier, id string, at time.Time) error {
	var (
		now              time.Time
		found            bool
		revoked, expired bool
	)
	err := q.QueryRow(ctx, `SELECT clock_timestamp(), g.id IS NOT NULL,
			coalesce(g.revoked_at IS NOT NULL, false), coalesce(g.expires_at <= $2, false)
		FROM (SELECT 1) AS one LEFT JOIN grants g ON g.id = $1`, id, at).Scan(&now, &found, &revoked, &expired)
	if err != nil {
		return err
	}
	if !found {
		return store.ErrNotFound
	}
	if err := store.CheckSkew(at, now); err != nil {
		return err
	}
	switch {
	case revoked:
		return store.ErrRevoked
	case expired:
		return store.ErrExpired
	}
	return store.ErrGrantUsedUp
}

// RevokeGrant implements [store.Grants].
func (s *Store) RevokeGrant(ctx context.Context, id string, at time.Time, note store.Note) error {
	const op = "revoke grant"
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.revoke(ctx, op, note,
		`UPDATE grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`,
		`SELECT false, revoked_at IS NOT NULL FROM grants WHERE id = $1`, id, at)
}

// ParkGranted implements [store.Grants]: the use of the grant, the
// approved ticket and its audit row commit together or not at all.
func (s *Store) ParkGranted(ctx context.Context, a store.Approval, grantID string, note store.Note) (store.Approval, store.Grant, error) {
	const op = "park granted"
	if err := a.Check(); err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("%s: %w", op, err)
	}
	if a.State != store.Approved {
		return store.Approval{}, store.Grant{}, fmt.Errorf("%s: %w: a granted ticket is approved", op, store.ErrInvalid)
	}
	if err := checkVotes(a.Votes); err != nil {
		return store.Approval{}, store.Grant{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, store.Grant{}, s.fail(ctx, op, err)
	}
	a = newTicket(a)
	var (
		out store.Approval
		g   store.Grant
	)
	err := s.inTxn(ctx, func(t *txn) error {
		// One round trip: the use and the ticket (rolled back with the
		// whole transaction if the use was refused).
		b := &pgx.Batch{}
		b.Queue(queryUseGrant, grantID, a.CreatedAt)
		b.Queue(queryInsertTicket, insertArgs(a)...)
		br := t.send(ctx, b)
		var err error
		g, err = scanGrant(br.QueryRow())
		if errNoRow(err) {
			// Read the ticket's result: a refused insert aborts the
			// transaction, and its error then wins.
			_, err = scanTicket(br.QueryRow())
			if cerr := br.Close(); cerr != nil {
				return cerr
			}
			if err != nil && !errNoRow(err) {
				return err
			}
			return whyNoUse(ctx, t.conn, grantID, a.CreatedAt)
		}
		if err != nil {
			_ = br.Close()
			return err
		}
		if out, err = readTicket(br); err != nil {
			return err
		}
		return t.commitNoted(ctx, note, false, out)
	})
	if err != nil {
		return store.Approval{}, store.Grant{}, s.fail(ctx, op, err)
	}
	return out, g, nil
}

// revoke runs a revocation in two round trips: BEGIN and update (which
// must change one row, keyed by $1, at $2); then note's record for the
// zero ticket and COMMIT. When update changes nothing,
// explain (keyed by $1) reads whether the record was used up (redeemed)
// and whether it was already revoked; no row means it does not exist.
func (s *Store) revoke(ctx context.Context, op string, note store.Note, update, explain string, key any, at time.Time) error {
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	err := s.inTxn(ctx, func(t *txn) error {
		b := &pgx.Batch{}
		b.Queue(update, key, at)
		br := t.send(ctx, b)
		tag, err := br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var used, revoked bool
			err := t.conn.QueryRow(ctx, explain, key).Scan(&used, &revoked)
			switch {
			case errNoRow(err):
				return store.ErrNotFound
			case err != nil:
				return err
			case revoked:
				return store.ErrRevoked
			case used:
				return store.ErrConsumed
			}
			return fmt.Errorf("%w: nothing revoked", ErrDatabase)
		}
		return t.commitNoted(ctx, note, false, store.Approval{})
	})
	return s.fail(ctx, op, err)
}
