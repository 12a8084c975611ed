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

// RedeemInvite implements [store.Invites].
func (s *Store) RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (store.Invite, error) {
	if at.IsZero() {
		return store.Invite{}, fmt.Errorf("sqlite: redeem invite: %w: time unset", store.ErrInvalid)
	}
	var inv store.Invite
	err := s.write(ctx, "redeem invite", func(tx runner) error {
		var created, expires, redeemed sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT user, created_at, expires_at, redeemed_at FROM invites
			WHERE token_hash = ?`, tokenHash[:]).Scan(&inv.User, &created, &expires, &redeemed)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return dbErr(err)
		case redeemed.Valid:
			return store.ErrConsumed
		case at.UnixMicro() >= expires.Int64:
			return store.ErrExpired
		}
		n, err := tx.changes(ctx, `UPDATE invites SET redeemed_at = ?
			WHERE token_hash = ? AND redeemed_at IS NULL`, at.UnixMicro(), tokenHash[:])
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrConsumed
		}
		inv.TokenHash = tokenHash
		inv.CreatedAt, inv.ExpiresAt = fromMicros(created), fromMicros(expires)
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
	var (
		inv                        store.Invite
		created, expires, redeemed sql.NullInt64
	)
	err := s.reader().QueryRowContext(ctx, `SELECT user, created_at, expires_at, redeemed_at FROM invites
		WHERE token_hash = ?`, tokenHash[:]).Scan(&inv.User, &created, &expires, &redeemed)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Invite{}, fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	inv.TokenHash = tokenHash
	inv.CreatedAt, inv.ExpiresAt, inv.RedeemedAt = fromMicros(created), fromMicros(expires), fromMicros(redeemed)
	return inv, nil
}
