package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change.
type migration struct {
	version int
	sql     string
}

// migrations returns the embedded migrations in order. Each file is named
// NNN_what.sql and numbered from 1 without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migration, 0, len(names))
	for i, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s is out of sequence", base)
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, sql: string(body)})
	}
	return out, nil
}

// Advisory lock classes: the first key of pg_advisory_xact_lock(int, int).
// The second key hashes the schema (and the session or user), so stores in
// different schemas of one database do not wait for each other; a hash
// collision only makes two callers queue, never lets two in at once.
const (
	lockMigrate = 0x61737500 // "asu\x00"
	lockSession = 0x61737501
	lockUser    = 0x61737502
)

// Migrate brings the schema to the newest version this build knows, in one
// transaction. Replicas calling it at once queue on an advisory lock, so
// each migration runs exactly once; a schema newer than this build fails
// with [ErrSchemaVersion] and is left alone.
func (s *Store) Migrate(ctx context.Context) error {
	const op = "migrate"
	if err := s.enter(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Lock first: CREATE ... IF NOT EXISTS is not safe to race.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(coalesce(nullif($2, ''), current_schema(), '')))`,
			lockMigrate, s.schema); err != nil {
			return err
		}
		if s.schema != "" {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		have, err := version(ctx, tx)
		if err != nil {
			return err
		}
		if have > len(ms) {
			return fmt.Errorf("%w: database at %d, this build knows %d", ErrSchemaVersion, have, len(ms))
		}
		for _, m := range ms[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, m.version); err != nil {
				return err
			}
		}
		return nil
	})
	return s.fail(ctx, op, err)
}

// version returns the newest applied migration, 0 for none.
func version(ctx context.Context, q pgx.Tx) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	return v, err
}

// checkVersion fails unless the schema is exactly at the newest version.
func (s *Store) checkVersion(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var have int
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil || !exists {
			return err
		}
		have, err = version(ctx, tx)
		return err
	})
	if err != nil {
		return s.fail(ctx, "check schema version", err)
	}
	if have != len(ms) {
		return fmt.Errorf("%w: database at %d, this build needs %d (run Migrate)", ErrSchemaVersion, have, len(ms))
	}
	return nil
}
