package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentstepup/asu/store/sqlite"
)

// runBackup is the backup command: it writes a consistent copy of a
// gateway's SQLite file, running or not, to a new file, and prints one
// line naming the copy and the audit head it ends at. It never
// overwrites a file.
//
//	go run ./examples/gateway backup -db asu.db -to asu-2026-12-02.db
//
// To restore: stop the gateway, remove asu.db-wal and asu.db-shm, copy
// the backup over asu.db and start it again. A backup is older than the
// gateway's last decisions, so the gateway's rollback mark then refuses
// to decide until an operator reconciles the tickets that may have run
// since the backup was taken. PostgreSQL is backed up with its own tools
// (pg_basebackup, pg_dump): see the README's "Backups, restores and
// failover".
func runBackup(ctx context.Context, w io.Writer, args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(w)
	db := fs.String("db", "", "the gateway's SQLite `file`")
	to := fs.String("to", "", "the backup `file` to write (must not exist)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" || *to == "" || fs.NArg() > 0 {
		return errors.New("usage: backup -db FILE -to FILE (PostgreSQL: use pg_basebackup or pg_dump)")
	}
	if _, err := os.Stat(*db); err != nil {
		return fmt.Errorf("%w (never creating an empty database here)", err)
	}
	st, err := sqlite.Open(ctx, *db, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Backup(ctx, *to); err != nil {
		return err
	}
	// Read the copy back as a restore would, so the line printed is about
	// the file written, not the one still changing.
	b, err := sqlite.Open(ctx, *to, &sqlite.Options{Inspect: true})
	if err != nil {
		return err
	}
	defer b.Close()
	head, err := b.AuditHead(ctx)
	if err != nil {
		return fmt.Errorf("backup written to %s, but it does not read back: %w", *to, err)
	}
	info, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "backup of %s written to %s: %d bytes, audit head seq %d (%s)\n", *db, *to, info.Size(), head.Seq, head.Hash)
	return nil
}
