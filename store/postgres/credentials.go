package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

const credentialColumns = `id, user_name, public_key, sign_count, backup_eligible, backup_state, aaguid, created_at,
	revoked_at, seal`

func scanCredential(row pgx.Row) (store.Credential, error) {
	var (
		c       store.Credential
		count   int64
		created pgtype.Timestamptz
		revoked pgtype.Timestamptz
	)
	err := row.Scan(&c.ID, &c.User, &c.PublicKey, &count, &c.BackupEligible, &c.BackupState, &c.AAGUID, &created,
		&revoked, &c.Seal)
	if err != nil {
		return store.Credential{}, err
	}
	c.SignCount = uint32(count) // the column's CHECK keeps it within uint32
	c.CreatedAt, c.RevokedAt = fromTS(created), fromTS(revoked)
	return c, nil
}

// PutCredential implements [store.Credentials].
func (s *Store) PutCredential(ctx context.Context, c store.Credential) error {
	const op = "put credential"
	if err := c.Check(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO credentials
		(id, user_name, public_key, sign_count, backup_eligible, backup_state, aaguid, created_at, seal)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		c.ID, c.User, c.PublicKey, int64(c.SignCount), c.BackupEligible, c.BackupState, c.AAGUID, ts(c.CreatedAt), c.Seal)
	return s.fail(ctx, op, err)
}

// GetCredential implements [store.Credentials].
func (s *Store) GetCredential(ctx context.Context, id []byte) (store.Credential, error) {
	const op = "get credential"
	if err := s.enter(ctx); err != nil {
		return store.Credential{}, s.fail(ctx, op, err)
	}
	c, err := scanCredential(s.pool.QueryRow(ctx, `SELECT `+credentialColumns+` FROM credentials WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Credential{}, s.fail(ctx, op, err)
	}
	return c, nil
}

// CredentialsByUser implements [store.Credentials].
func (s *Store) CredentialsByUser(ctx context.Context, user string) ([]store.Credential, error) {
	const op = "credentials by user"
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+credentialColumns+` FROM credentials
		WHERE user_name = $1 ORDER BY created_at NULLS FIRST, id`, user)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Credential, error) { return scanCredential(r) })
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// AdvanceSignCount implements [store.Credentials] with one conditional
// UPDATE: of concurrent calls presenting the same counter, one wins and
// the rest see the count it left and fail with [store.ErrCounter]; none
// wins once the credential is revoked. It commits at the server's
// synchronous_commit, like a decision: a sign-in relies on it with no
// decision after it.
func (s *Store) AdvanceSignCount(ctx context.Context, id []byte, n uint32) error {
	return s.advanceSignCount(ctx, id, n, true)
}

// AdvanceSignCountRelaxed implements [store.RelaxedSignCount]: the same
// update, committed with synchronous_commit off, so that it becomes
// durable with the next durable commit on the cluster (the approval's
// vote that follows it).
func (s *Store) AdvanceSignCountRelaxed(ctx context.Context, id []byte, n uint32) error {
	return s.advanceSignCount(ctx, id, n, false)
}

// queryAdvanceSignCount advances a credential's counter by the rules of
// [store.Credentials.AdvanceSignCount].
const queryAdvanceSignCount = `UPDATE credentials SET sign_count = $2
		WHERE id = $1 AND revoked_at IS NULL AND ($2 > sign_count OR ($2 = 0 AND sign_count = 0))`

// advanceSignCount is AdvanceSignCount, at the server's synchronous_commit
// when durable is true and without waiting for the WAL otherwise.
func (s *Store) advanceSignCount(ctx context.Context, id []byte, n uint32, durable bool) error {
	const op = "advance sign count"
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	var tag pgconn.CommandTag
	var err error
	if durable {
		tag, err = s.pool.Exec(ctx, queryAdvanceSignCount, id, int64(n))
	} else {
		err = s.relaxedOne(ctx, func(br pgx.BatchResults) error {
			tag, err = br.Exec()
			return err
		}, queryAdvanceSignCount, id, int64(n))
	}
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var revoked bool
	err = s.pool.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM credentials WHERE id = $1`, id).Scan(&revoked)
	switch {
	case errNoRow(err):
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	case err != nil:
		return s.fail(ctx, op, err)
	case revoked:
		return fmt.Errorf("%s: %w", op, store.ErrRevoked)
	}
	return fmt.Errorf("%s: %w", op, store.ErrCounter)
}

// RevokeCredential implements [store.Credentials]. The credential stays
// readable, with RevokedAt set.
func (s *Store) RevokeCredential(ctx context.Context, id []byte, at time.Time, note store.Note) error {
	const op = "revoke credential"
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.revoke(ctx, op, note,
		`UPDATE credentials SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`,
		`SELECT false, revoked_at IS NOT NULL FROM credentials WHERE id = $1`, id, at)
}
