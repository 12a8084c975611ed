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

// CreateInvite implements [store.Invites].
func (s *Store) CreateInvite(ctx context.Context, inv store.Invite) error {
	const op = "create invite"
	if err := inv.Check(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO invites (token_hash, user_name, created_at, expires_at)
		VALUES ($1, $2, $3, $4)`, inv.TokenHash[:], inv.User, ts(inv.CreatedAt), inv.ExpiresAt)
	return s.fail(ctx, op, err)
}

// RedeemInvite implements [store.Invites] with one conditional UPDATE, so
// an invite enrolls at most one credential however many replicas race.
func (s *Store) RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (store.Invite, error) {
	const op = "redeem invite"
	if at.IsZero() {
		return store.Invite{}, fmt.Errorf("%s: %w: time unset", op, store.ErrInvalid)
	}
	if err := s.enter(ctx); err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	var (
		inv                        store.Invite
		created, expires, redeemed pgtype.Timestamptz
	)
	err := s.pool.QueryRow(ctx, `UPDATE invites SET redeemed_at = $2
		WHERE token_hash = $1 AND redeemed_at IS NULL AND expires_at > $2
		RETURNING user_name, created_at, expires_at, redeemed_at`, tokenHash[:], at).
		Scan(&inv.User, &created, &expires, &redeemed)
	if errors.Is(err, pgx.ErrNoRows) {
		var used bool
		err = s.pool.QueryRow(ctx, `SELECT redeemed_at IS NOT NULL FROM invites WHERE token_hash = $1`,
			tokenHash[:]).Scan(&used)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = store.ErrNotFound
		case err == nil && used:
			err = store.ErrConsumed
		case err == nil:
			err = store.ErrExpired
		}
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	inv.TokenHash = tokenHash
	inv.CreatedAt, inv.ExpiresAt, inv.RedeemedAt = fromTS(created), fromTS(expires), fromTS(redeemed)
	return inv, nil
}

// GetInvite implements [store.Invites].
func (s *Store) GetInvite(ctx context.Context, tokenHash [32]byte) (store.Invite, error) {
	const op = "get invite"
	if err := s.enter(ctx); err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	var (
		inv                        store.Invite
		created, expires, redeemed pgtype.Timestamptz
	)
	err := s.pool.QueryRow(ctx, `SELECT user_name, created_at, expires_at, redeemed_at FROM invites
		WHERE token_hash = $1`, tokenHash[:]).Scan(&inv.User, &created, &expires, &redeemed)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	inv.TokenHash = tokenHash
	inv.CreatedAt, inv.ExpiresAt, inv.RedeemedAt = fromTS(created), fromTS(expires), fromTS(redeemed)
	return inv, nil
}
