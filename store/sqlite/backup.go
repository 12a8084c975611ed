package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the database to a new file at path
// while the store keeps serving: SQLite's VACUUM INTO reads one snapshot
// of the file (a read transaction, which in WAL mode never blocks the
// writers), so the copy holds every decision committed before it started
// and none after, each with its audit row. The copy is written beside
// path under a temporary name, synced to disk, and then linked to path,
// which must not exist: Backup never overwrites a file ([fs.ErrExist]),
// and a crash leaves no half-written file at path. The directory is
// synced too, so the backup survives a power loss once Backup returns.
//
// A backup is a point in the past: restoring it rolls the store back
// (see the package documentation, "Backups and restores").
func (s *Store) Backup(ctx context.Context, path string) error {
	const op = "backup"
	if err := s.enterRead(ctx, op); err != nil {
		return err
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return fmt.Errorf("sqlite: %s: path must name a file", op)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("sqlite: %s: %s: %w", op, path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".partial-"+hex.EncodeToString(suffix[:]))
	defer os.Remove(tmp) // after the link, or after a failure
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return s.fail(ctx, op, dbErr(err))
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	// A link, unlike a rename, fails when path appeared meanwhile.
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("sqlite: %s: %s: %w", op, path, fs.ErrExist)
		}
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if err := syncFile(filepath.Dir(path)); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// syncFile flushes the file or directory at path to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
