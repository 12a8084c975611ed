package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/store"
)

const credentialCols = `id, user, public_key, sign_count, backup_eligible, backup_state, aaguid, created_at, revoked_at, seal`

func scanCredential(row scanner) (store.Credential, error) {
	var (
		c       store.Credential
		created sql.NullInt64
		revoked sql.NullInt64
		count   int64
	)
	if err := row.Scan(&c.ID, &c.User, &c.PublicKey, &count, &c.BackupEligible, &c.BackupState, &c.AAGUID,
		&created, &revoked, &c.Seal); err != nil {
		return store.Credential{}, err
	}
	c.SignCount = uint32(count)
	c.CreatedAt, c.RevokedAt = fromMicros(created), fromMicros(revoked)
	return c, nil
}

// PutCredential implements [store.Credentials].
func (s *Store) PutCredential(ctx context.Context, c store.Credential) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("sqlite: put credential: %w", err)
	}
	return s.write(ctx, "put credential", func(tx runner) error {
		n, err := tx.changes(ctx, `INSERT INTO credentials (`+credentialCols+`) VALUES (`+placeholders(10)+`)
			ON CONFLICT (id) DO NOTHING`, c.ID, c.User, c.PublicKey, int64(c.SignCount), c.BackupEligible,
			c.BackupState, c.AAGUID, micros(c.CreatedAt), nil, c.Seal)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrDuplicate
		}
		return nil
	})
}

// GetCredential implements [store.Credentials].
func (s *Store) GetCredential(ctx context.Context, id []byte) (store.Credential, error) {
	if err := s.enter(ctx, "get credential"); err != nil {
		return store.Credential{}, err
	}
	c, err := scanCredential(s.reader().QueryRowContext(ctx, `SELECT `+credentialCols+` FROM credentials WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Credential{}, fmt.Errorf("sqlite: get credential: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Credential{}, s.fail(ctx, "get credential", err)
	}
	return c, nil
}

// CredentialsByUser implements [store.Credentials].
func (s *Store) CredentialsByUser(ctx context.Context, user string) ([]store.Credential, error) {
	if err := s.enter(ctx, "credentials by user"); err != nil {
		return nil, err
	}
	out, err := func() ([]store.Credential, error) {
		rows, err := s.reader().QueryContext(ctx, `SELECT `+credentialCols+` FROM credentials WHERE user = ?
			ORDER BY created_at, id`, user)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []store.Credential
		for rows.Next() {
			c, err := scanCredential(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, rows.Err()
	}()
	if err != nil {
		return nil, s.fail(ctx, "credentials by user", err)
	}
	return out, nil
}

// AdvanceSignCount implements [store.Credentials]. Its commit waits for
// the disk, like a decision's: a sign-in relies on it with no decision
// after it.
func (s *Store) AdvanceSignCount(ctx context.Context, id []byte, n uint32) error {
	return s.advanceSignCount(ctx, id, n, true)
}

// AdvanceSignCountRelaxed implements [store.RelaxedSignCount]: the same
// update, committed with synchronous=NORMAL on the relaxed connections, so
// it becomes durable with the next durable commit on the file (the
// approval's vote that follows it).
func (s *Store) AdvanceSignCountRelaxed(ctx context.Context, id []byte, n uint32) error {
	return s.advanceSignCount(ctx, id, n, false)
}

// advanceSignCount is AdvanceSignCount, waiting for the disk when durable
// is true.
func (s *Store) advanceSignCount(ctx context.Context, id []byte, n uint32, durable bool) error {
	return s.commit(ctx, "advance sign count", durable, func(tx runner) error {
		// One conditional update: the counter must grow, except 0 after 0
		// (authenticators without a counter).
		changed, err := tx.changes(ctx, `UPDATE credentials SET sign_count = ?
			WHERE id = ? AND revoked_at IS NULL AND (sign_count < ? OR (sign_count = 0 AND ? = 0))`,
			int64(n), id, int64(n), int64(n))
		if err != nil {
			return err
		}
		if changed == 1 {
			return nil
		}
		var revoked sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT revoked_at FROM credentials WHERE id = ?`, id).Scan(&revoked)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return dbErr(err)
		case revoked.Valid:
			return store.ErrRevoked
		}
		return store.ErrCounter
	})
}

// RevokeCredential implements [store.Credentials].
func (s *Store) RevokeCredential(ctx context.Context, id []byte, at time.Time, note store.Note) error {
	if err := store.CheckTime(at); err != nil {
		return fmt.Errorf("sqlite: revoke credential: %w", err)
	}
	return s.write(ctx, "revoke credential", func(tx runner) error {
		n, err := tx.changes(ctx, `UPDATE credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
			at.UnixMicro(), id)
		if err != nil {
			return err
		}
		if n == 0 {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM credentials WHERE id = ?`, id).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			}
			if err != nil {
				return dbErr(err)
			}
			return store.ErrRevoked
		}
		return s.note(ctx, tx, note, store.Approval{}, false)
	})
}
