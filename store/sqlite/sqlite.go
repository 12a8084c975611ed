// Package sqlite is the embedded [store.Store]: one SQLite file in WAL mode
// through modernc.org/sqlite (pure Go, no cgo), shared safely by the
// goroutines of one process and by several processes on one machine.
//
// # Transactions
//
// Every state change is one transaction whose UPDATE names the state it
// leaves (UPDATE ... WHERE id = ? AND state = 'approved'), so a change is
// made at most once however many callers race. Read-modify-write steps (the
// audit chain head, pending caps, merging) run in BEGIN IMMEDIATE
// transactions, which take SQLite's write lock up front: two processes
// serialize instead of both reading the same head. Every write is such a
// transaction. Within a process, writers also queue on a semaphore that
// honours their context, so they wait for each other without SQLite's
// sleeping busy handler; across processes the busy timeout
// ([Options.BusyTimeout]) applies.
//
// # Durability
//
// By default commits are synchronous=FULL: a consumed approval survives a
// power loss, not only a crash. [Options.RelaxedSyncUnsafe] trades that for
// speed.
//
// # Decisions and their audit rows
//
// A state change and the audit record its [store.Note] makes are written in
// the same transaction, which also reads the chain head: after any crash,
// every decision in the file has its row, and the chain has one head.
//
// # Time
//
// The store's clock is [Options.Clock] (default time.Now): audit records are
// stamped with it, and deciding methods compare the time they are given
// with it ([store.MaxSkew]). Processes sharing a file share a machine, so
// they share its clock.
//
// # Schema and integrity
//
// Open creates the schema and applies versioned migrations, recorded in the
// schema_version table, in one transaction each; a database written by a
// newer version of this package is refused. Open then runs PRAGMA
// quick_check and reads the first row of every table, and refuses with
// [ErrCorrupt] a file it cannot read: a damaged store must not keep
// approving while its audit table is unreadable. The check reads the whole
// file, so Open takes time linear in its size.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/agentstepup/asu/store"
)

// Options tunes [Open]. The zero value, like a nil *Options, means defaults.
type Options struct {
	// BusyTimeout is how long a transaction waits for another process's
	// write lock before failing (default 10s).
	BusyTimeout time.Duration
	// MaxConns bounds open connections (default 8). Readers run in
	// parallel; writers take turns.
	MaxConns int
	// RelaxedSyncUnsafe sets synchronous=NORMAL: commits no longer wait for
	// the disk, so a power loss (not a process crash) may undo the last
	// commits, including consumes, and an approval could then run twice.
	RelaxedSyncUnsafe bool
	// Clock is the store's clock (default time.Now). Tests inject a fake.
	Clock func() time.Time
}

// ErrCorrupt is wrapped by the error [Open] returns for a file whose
// tables cannot be read.
var ErrCorrupt = errors.New("sqlite: database file is damaged")

// Store is a [store.Store] on one SQLite file.
type Store struct {
	clock  func() time.Time
	db     *sql.DB
	writer chan struct{} // a one-slot semaphore: writers in this process queue here, not in SQLite
	closed atomic.Bool
	stmts  sync.Map // query text -> *sql.Stmt
	// commits counts committed write transactions, so tests can count the
	// commits an operation costs.
	commits atomic.Int64
}

var _ store.Store = (*Store)(nil)

// Open opens or creates the database file at path, migrates its schema and
// checks that every table can be read ([ErrCorrupt] otherwise). path must
// be a file name (no "?"); ":memory:" is not supported, as each connection
// would see its own database. opts may be nil.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 8
	}
	if path == "" || strings.ContainsAny(path, "?#") || path == ":memory:" {
		return nil, fmt.Errorf("sqlite: open: %w: path must name a file", store.ErrInvalid)
	}
	syncMode := "FULL"
	if o.RelaxedSyncUnsafe {
		syncMode = "NORMAL"
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+syncMode+")")
	q.Add("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %v", err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	s := &Store{clock: o.Clock, db: db, writer: make(chan struct{}, 1)}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		if isCorrupt(err) {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// tables are the tables check reads.
var tables = []string{"approvals", "credentials", "invites", "counters", "streaks", "audit", "grants", "schema_version"}

// check runs PRAGMA quick_check and reads the first row of every table,
// failing with ErrCorrupt when SQLite reports damage or a table cannot be
// read.
func (s *Store) check(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return fmt.Errorf("%w: quick_check: %v", ErrCorrupt, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			_ = rows.Close()
			return fmt.Errorf("%w: quick_check: %v", ErrCorrupt, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	err = rows.Err()
	_ = rows.Close()
	if err != nil {
		return fmt.Errorf("%w: quick_check: %v", ErrCorrupt, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check found %d problems, first: %s", ErrCorrupt, len(problems), problems[0])
	}
	for _, table := range tables {
		rows, err := s.db.QueryContext(ctx, `SELECT * FROM `+table+` LIMIT 1`)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			_ = rows.Close()
		}
		if err != nil {
			return fmt.Errorf("%w: table %s: %v", ErrCorrupt, table, err)
		}
	}
	return nil
}

// isCorrupt reports whether err is SQLite saying the file is not a
// database or is malformed.
func isCorrupt(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB")
}

// Now implements [store.Clock] with [Options.Clock].
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.enter(ctx, "now"); err != nil {
		return time.Time{}, err
	}
	return s.clock(), nil
}

// Close closes the database. Later calls fail with [store.ErrClosed];
// closing again returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.closeStmts()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close: %v", err)
	}
	return nil
}

// Baseline runs one empty write transaction (BEGIN IMMEDIATE; COMMIT), the
// floor every state change pays. Benchmarks measure against it.
func (s *Store) Baseline(ctx context.Context) error {
	return s.write(ctx, "baseline", func(runner) error { return nil })
}

// enter checks the store is open and ctx is live.
func (s *Store) enter(ctx context.Context, op string) error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise. Errors fn returns are passed
// through; database errors are wrapped opaquely.
func (s *Store) write(ctx context.Context, op string, fn func(runner) error) error {
	if err := s.enter(ctx, op); err != nil {
		return err
	}
	select {
	case s.writer <- struct{}{}:
		defer func() { <-s.writer }()
	case <-ctx.Done():
		return fmt.Errorf("sqlite: %s: %w", op, ctx.Err())
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if err := fn(runner{s: s, tx: tx}); err != nil {
		_ = tx.Rollback()
		if errors.Is(err, errDB) {
			return s.fail(ctx, op, err)
		}
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(ctx, op, err)
	}
	s.commits.Add(1)
	return nil
}

// errDB marks errors that came from the database, to be reported opaquely.
var errDB = errors.New("database")

// dbErr marks err as a database error.
func dbErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", errDB, err)
}

// fail turns a database error into the store's: the context's error when
// ctx ended, ErrClosed when the store was closed meanwhile, and otherwise
// an error that does not expose the driver's type.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("sqlite: %s: %w", op, cerr)
	}
	if s.closed.Load() || errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrClosed)
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, errDB.Error()+": ")
	return fmt.Errorf("sqlite: %s: %s", op, msg)
}

// micros encodes t for an INTEGER column: Unix microseconds, NULL for the
// zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros decodes what micros encoded.
func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}
