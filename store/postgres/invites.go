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
// an invite enrolls at most one credential however many replicas race,
// and none once it is revoked.
func (s *Store) RedeemInvite(ctx context.Context, tokenHash [32]byte, at time.Time) (store.Invite, error) {
	const op = "redeem invite"
	if err := store.CheckTime(at); err != nil {
		return store.Invite{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	inv, err := scanInvite(s.pool.QueryRow(ctx, `UPDATE invites SET redeemed_at = $2
		WHERE token_hash = $1 AND redeemed_at IS NULL AND revoked_at IS NULL AND expires_at > $2
		RETURNING `+inviteColumns, tokenHash[:], at))
	if errors.Is(err, pgx.ErrNoRows) {
		var used, revoked bool
		err = s.pool.QueryRow(ctx, `SELECT redeemed_at IS NOT NULL, revoked_at IS NOT NULL FROM invites
			WHERE token_hash = $1`, tokenHash[:]).Scan(&used, &revoked)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = store.ErrNotFound
		case err == nil && revoked:
			err = store.ErrRevoked
		case err == nil && used:
			err = store.ErrConsumed
		case err == nil:
			err = store.ErrExpired
		}
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	return inv, nil
}

// RevokeInvite implements [store.Invites]: only an unredeemed invite is
// revoked.
func (s *Store) RevokeInvite(ctx context.Context, tokenHash [32]byte, at time.Time, note store.Note) error {
	const op = "revoke invite"
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.revoke(ctx, op, note,
		`UPDATE invites SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL AND redeemed_at IS NULL`,
		`SELECT redeemed_at IS NOT NULL, revoked_at IS NOT NULL FROM invites WHERE token_hash = $1`, tokenHash[:], at)
}

const inviteColumns = `token_hash, user_name, created_at, expires_at, redeemed_at, revoked_at`

func scanInvite(row pgx.Row) (store.Invite, error) {
	var (
		inv                                 store.Invite
		hash                                []byte
		created, expires, redeemed, revoked pgtype.Timestamptz
	)
	if err := row.Scan(&hash, &inv.User, &created, &expires, &redeemed, &revoked); err != nil {
		return store.Invite{}, err
	}
	copy(inv.TokenHash[:], hash)
	inv.CreatedAt, inv.ExpiresAt = fromTS(created), fromTS(expires)
	inv.RedeemedAt, inv.RevokedAt = fromTS(redeemed), fromTS(revoked)
	return inv, nil
}

// GetInvite implements [store.Invites].
func (s *Store) GetInvite(ctx context.Context, tokenHash [32]byte) (store.Invite, error) {
	const op = "get invite"
	if err := s.enter(ctx); err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	inv, err := scanInvite(s.pool.QueryRow(ctx, `SELECT `+inviteColumns+` FROM invites WHERE token_hash = $1`,
		tokenHash[:]))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Invite{}, s.fail(ctx, op, err)
	}
	return inv, nil
}
