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
// By default every decision commits synchronous=FULL: a consumed approval
// survives a power loss, not only a crash. [Options.RelaxedSyncUnsafe]
// trades that for speed.
//
// Three writes that decide nothing commit with synchronous=NORMAL even
// so: the first showing of a card ([Store.Show]), flood counts
// ([Store.AddCounts]) and the signature counter an approval's answer
// advances ([Store.AdvanceSignCountRelaxed]), which the approval's vote
// follows. A sign-in's counter ([Store.AdvanceSignCount]) waits for the
// disk: a sign-in relies on it with no decision after it. Such a relaxed commit is appended to the WAL
// without waiting for the disk, and becomes durable with the next
// synchronous=FULL commit of any connection or process on the file:
// that commit syncs the WAL file, every earlier frame with its own, and
// SQLite's WAL checksums chain each frame to the ones before it, so
// recovery never keeps a later commit without the earlier ones. A power
// loss can therefore undo only relaxed commits that no durable commit
// followed; a crash of the process loses nothing, since the operating
// system holds what was written. The store contract ([store.Votes],
// [store.Counters]) says why each such loss is safe; flood counts kept
// in a file of their own, not the gate's, become durable only with that
// file's next durable commit. synchronous is a setting of the connection: relaxed writes run
// on a connection of their own, opened at NORMAL and never used for
// anything else, so no decision ever commits on a relaxed connection. They queue on the same writer semaphore as every other
// write.
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
// quick_check, reads the first row of every table and verifies the whole
// audit chain, every record's hash and its link to the one before, and
// refuses with [store.ErrCorrupt] a file that fails any of them: a damaged
// store must not keep approving while its audit table is unreadable. The
// checks read the whole file, so Open takes time linear in its size; most
// of it is decoding and hashing each audit record. BenchmarkVerifyChain
// measures it: 17,000 to 45,000 records a second (22 to 60 µs each) on a
// shared two-core machine under a load average of 20 to 25, where one JSON
// decode of a record alone took 37 µs, so a floor: at that rate a chain of
// a million records adds a minute at most to Open.
// [Options.Inspect] opens a damaged file read-only instead, for
// [Store.Check] and reading what can still be read.
//
// Every audit record read is checked against its own hash and, when the
// record before it is read too, its link to it; the head an append links
// to is checked before the append. A mismatch, a row that does not parse
// and SQLite's own report of a malformed page are [store.ErrCorrupt],
// naming the seq or the row, and from then on the store refuses every
// call that decides, writes or reads credentials with [store.ErrCorrupt]
// until it is reopened (the audit chain, tickets and grants stay
// readable for the operator). [Store.Check] checks the file fully.
//
// # Backups and restores
//
// [Store.Backup] writes a consistent copy of the database while the gate
// serves. To restore one, stop the service, copy the backup into place
// (removing the -wal and -shm files beside the old one) and start it
// again. A backup is older than the gate's last decisions: the gate's
// rollback mark then refuses to decide and asks for a reconcile of the
// tickets that may have run since the backup was taken.
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
	// MaxConns bounds open connections (default 8, at least 2). Readers
	// run in parallel; writers take turns on one connection, held from the
	// first write, so readers have MaxConns-1.
	MaxConns int
	// RelaxedSyncUnsafe sets synchronous=NORMAL: commits no longer wait for
	// the disk, so a power loss (not a process crash) may undo the last
	// commits, including consumes, and an approval could then run twice.
	RelaxedSyncUnsafe bool
	// Clock is the store's clock (default time.Now). Tests inject a fake.
	Clock func() time.Time
	// Inspect opens the file read-only, for an operator to inspect: no
	// migration runs, Open does not check the file (call [Store.Check]),
	// and every call that would write fails. Open then succeeds on a
	// damaged file, so what can still be read can be read.
	Inspect bool
}

// ErrCorrupt is [store.ErrCorrupt], wrapped by the error [Open] returns
// for a file whose tables or audit chain cannot be read, and by every
// refusal of a store that found damage.
var ErrCorrupt = store.ErrCorrupt

// Store is a [store.Store] on one SQLite file.
type Store struct {
	clock  func() time.Time
	db     *sql.DB
	writer chan struct{} // a one-slot semaphore: writers in this process queue here, not in SQLite
	closed atomic.Bool
	stmts  sync.Map // query text -> *sql.Stmt
	// relaxed is the pool of the writes that decide nothing, whose
	// connections are at synchronous=NORMAL and serve nothing else, with
	// its own statements; nil when every connection is relaxed
	// (Options.RelaxedSyncUnsafe) or none writes (Options.Inspect).
	relaxed *sql.DB
	// durableConn and relaxedConn are the connections writes run on, one
	// of each pool, held while the store is open (see [writeConn]).
	durableConn, relaxedConn writeConn
	// commits counts committed write transactions, and durable those that
	// waited for the disk (synchronous=FULL), so tests can count what an
	// operation costs.
	commits atomic.Int64
	durable atomic.Int64
	// damage is the first damage seen; once set, deciding calls refuse.
	damage store.Damage
	path   string
	// hub, watchOnce and watching serve [Store.Watch].
	hub       store.Hub
	watchOnce sync.Once
	watching  atomic.Bool
	pollers   sync.WaitGroup
	closing   chan struct{} // closed by Close, to stop the poller
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
	if o.MaxConns < 2 {
		return nil, fmt.Errorf("sqlite: open: %w: Options.MaxConns is %d; it must be at least 2, since writes hold one and readers need another", store.ErrInvalid, o.MaxConns)
	}
	if path == "" || strings.ContainsAny(path, "?#") || path == ":memory:" {
		return nil, fmt.Errorf("sqlite: open: %w: path must name a file", store.ErrInvalid)
	}
	syncMode := "FULL"
	if o.RelaxedSyncUnsafe {
		syncMode = "NORMAL"
	}
	dsn := func(syncMode string) string {
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
		if o.Inspect {
			// Read as found: not even the journal mode is changed.
			q.Add("_pragma", "query_only(1)")
		} else {
			q.Add("_pragma", "journal_mode(WAL)")
			q.Add("_pragma", "foreign_keys(1)")
			q.Add("_pragma", "synchronous("+syncMode+")")
		}
		q.Add("_txlock", "immediate")
		return path + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn(syncMode))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %v", err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	s := &Store{clock: o.Clock, db: db, writer: make(chan struct{}, 1), path: path, closing: make(chan struct{})}
	s.durableConn.db = db
	if o.Inspect {
		return s, nil
	}
	if !o.RelaxedSyncUnsafe {
		// sql.Open only parses: the connection is made at the first
		// relaxed write.
		if s.relaxed, err = sql.Open("sqlite", dsn("NORMAL")); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("sqlite: open: %v", err)
		}
		// Relaxed writes take turns on the writer semaphore, on the one
		// connection they hold (see writeConn).
		s.relaxed.SetMaxOpenConns(1)
		s.relaxed.SetMaxIdleConns(1)
		s.relaxedConn.db = s.relaxed
	}
	if err := s.migrate(ctx); err != nil {
		s.closeDBs()
		if isCorrupt(err) {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	return s, nil
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
	if err := s.enterRead(ctx, "now"); err != nil {
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
	close(s.closing)
	s.pollers.Wait()
	s.hub.ChangedAll()
	// A write under way finishes first; none starts after (closed).
	s.writer <- struct{}{}
	s.durableConn.drop()
	s.relaxedConn.drop()
	<-s.writer
	s.closeStmts()
	if s.relaxed != nil {
		_ = s.relaxed.Close()
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close: %v", err)
	}
	return nil
}

// closeDBs closes the databases of a store that failed to open.
func (s *Store) closeDBs() {
	s.durableConn.drop()
	s.relaxedConn.drop()
	if s.relaxed != nil {
		_ = s.relaxed.Close()
	}
	_ = s.db.Close()
}

// Baseline runs one empty write transaction (BEGIN IMMEDIATE; COMMIT), the
// floor every state change pays. Benchmarks measure against it.
func (s *Store) Baseline(ctx context.Context) error {
	return s.write(ctx, "baseline", func(runner) error { return nil })
}

// enter checks the store is open, undamaged and ctx is live, for a call
// that decides, writes or reads credentials.
func (s *Store) enter(ctx context.Context, op string) error {
	if err := s.enterRead(ctx, op); err != nil {
		return err
	}
	if err := s.damage.Err(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// enterRead checks the store is open and ctx is live, for a read that a
// damaged store still answers.
func (s *Store) enterRead(ctx context.Context, op string) error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise, and returns once the commit is
// durable. Errors fn returns are passed through; database errors are
// wrapped opaquely.
func (s *Store) write(ctx context.Context, op string, fn func(runner) error) error {
	return s.commit(ctx, op, true, fn)
}

// writeRelaxed is write for a change that decides nothing: its commit
// does not wait for the disk (synchronous=NORMAL) and becomes durable
// with the next durable commit on the file. Only [Store.Show],
// [Store.AddCounts] and [Store.AdvanceSignCountRelaxed] write so; see the
// package doc.
func (s *Store) writeRelaxed(ctx context.Context, op string, fn func(runner) error) error {
	return s.commit(ctx, op, false, fn)
}

// commit is write, waiting for the disk when durable is true.
func (s *Store) commit(ctx context.Context, op string, durable bool, fn func(runner) error) error {
	if err := s.enter(ctx, op); err != nil {
		return err
	}
	select {
	case s.writer <- struct{}{}:
		defer func() { <-s.writer }()
	case <-ctx.Done():
		return fmt.Errorf("sqlite: %s: %w", op, ctx.Err())
	}
	if s.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrClosed)
	}
	w := &s.durableConn
	if !durable && s.relaxed != nil {
		w = &s.relaxedConn
	}
	r := runner{s: s, w: w, relaxed: w == &s.relaxedConn}
	// BEGIN IMMEDIATE waits for the file's write lock, which another
	// process may hold: it keeps ctx, so the wait ends with it. A ctx
	// that ends as BEGIN succeeds reports an error with the transaction
	// open: it is rolled back (or the connection dropped), so the next
	// write does not find one under way.
	if err := w.exec(ctx, `BEGIN IMMEDIATE`); err != nil {
		w.rollback()
		return s.fail(ctx, op, err)
	}
	open := true
	rollback := func() {
		if open {
			open = false
			w.rollback()
		}
	}
	defer rollback() // when fn panics
	if err := fn(r); err != nil {
		rollback()
		if errors.Is(err, errDB) {
			return s.fail(ctx, op, err)
		}
		return s.damage.Note(fmt.Errorf("sqlite: %s: %w", op, err))
	}
	if err := w.exec(context.WithoutCancel(ctx), `COMMIT`); err != nil {
		rollback()
		return s.fail(ctx, op, err)
	}
	open = false
	s.commits.Add(1)
	if !r.relaxed && s.relaxed != nil {
		s.durable.Add(1)
	}
	return nil
}

// errDB marks errors that came from the database, to be reported opaquely.
var errDB = errors.New("database")

// dbErr marks err as a database error. It keeps err in the chain only
// for errors.Is inside this package: fail never returns it.
func dbErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errDB, err)
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
	switch {
	case errors.Is(err, store.ErrCorrupt):
		msg = strings.TrimPrefix(msg, store.ErrCorrupt.Error())
		return s.damage.Note(fmt.Errorf("sqlite: %s: %w%s", op, store.ErrCorrupt, msg))
	case isCorrupt(err):
		// SQLite's own report of a malformed page or file.
		return s.damage.Note(fmt.Errorf("sqlite: %s: %w: %s", op, store.ErrCorrupt, msg))
	}
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
