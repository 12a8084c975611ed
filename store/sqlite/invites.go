package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

// CreateInvite implements [store.Invites].
func (s *Store) CreateInvite(ctx context.Context, inv store.Invite) error {
	if err := inv.Check(); err != nil {
		return fmt.Errorf("sqlite: create invite: %w", err)
	}
	return s.write(ctx, "create invite", func(tx runner) error {
		n, err := tx.changes(ctx, `INSERT INTO invites (token_hash, user, created_at, expires_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (token_hash) DO NOTHING`,
			inv.TokenHash[:], inv.User, micros(inv.CreatedAt), inv.ExpiresAt.UnixMicro())
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrDuplicate
		}
		return nil
	})
}

// getInvite reads the invite tokenHash, or store.ErrNotFound.
func getInvite(ctx context.Context, q querier, tokenHash [32]byte) (store.Invite, error) {
	var (
		inv                                 store.Invite
		created, expires, redeemed, revoked sql.NullInt64
	)
	err := q.QueryRowContext(ctx, `SELECT user, created_at, expires_at, redeemed_at, revoked_at FROM invites
		WHERE token_hash = ?`, tokenHash[:]).Scan(&inv.User, &created, &expires, &redeemed, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Invite{}, store.ErrNotFound
	}
	if err != nil {
		return store.Invite{}, dbErr(err)
	}
	inv.TokenHash = tokenHash
	inv.CreatedAt, inv.ExpiresAt = fromMicros(created), fromMicros(expires)
	inv.RedeemedAt, inv.RevokedAt = fromMicros(redeemed), fromMicros(revoked)
	return inv, nil
}

// RedeemInvite implements [store.Invites].
func (s *Store) RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (store.Invite, error) {
	if err := store.CheckTime(at); err != nil {
		return store.Invite{}, fmt.Errorf("sqlite: redeem invite: %w", err)
	}
	var inv store.Invite
	err := s.write(ctx, "redeem invite", func(tx runner) error {
		var err error
		inv, err = getInvite(ctx, tx, tokenHash)
		switch {
		case err != nil:
			return err
		case !inv.RevokedAt.IsZero():
			return store.ErrRevoked
		case !inv.RedeemedAt.IsZero():
			return store.ErrConsumed
		case at.UnixMicro() >= inv.ExpiresAt.UnixMicro():
			return store.ErrExpired
		}
		n, err := tx.changes(ctx, `UPDATE invites SET redeemed_at = ?
			WHERE token_hash = ? AND redeemed_at IS NULL AND revoked_at IS NULL`, at.UnixMicro(), tokenHash[:])
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrConsumed
		}
		inv.RedeemedAt = fromMicros(sql.NullInt64{Int64: at.UnixMicro(), Valid: true})
		return nil
	})
	if err != nil {
		return store.Invite{}, err
	}
	return inv, nil
}

// GetInvite implements [store.Invites].
func (s *Store) GetInvite(ctx context.Context, tokenHash [32]byte) (store.Invite, error) {
	const op = "get invite"
	if err := s.enter(ctx, op); err != nil {
		return store.Invite{}, err
	}
	inv, err := getInvite(ctx, s.reader(), tokenHash)
	if errors.Is(err, store.ErrNotFound) {
		return store.Invite{}, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	return inv, nil
}

// RevokeInvite implements [store.Invites].
func (s *Store) RevokeInvite(ctx context.Context, tokenHash [32]byte, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("sqlite: revoke invite: %w", err)
	}
	return s.write(ctx, "revoke invite", func(tx runner) error {
		inv, err := getInvite(ctx, tx, tokenHash)
		switch {
		case err != nil:
			return err
		case !inv.RevokedAt.IsZero():
			return store.ErrRevoked
		case !inv.RedeemedAt.IsZero():
			return store.ErrConsumed
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invites SET revoked_at = ? WHERE token_hash = ?`,
			at.UnixMicro(), tokenHash[:]); err != nil {
			return dbErr(err)
		}
		return s.note(ctx, tx, note, store.Approval{}, false)
	})
}
