// Package postgres is the [store.Store] for many gate replicas sharing one
// PostgreSQL database, through a pgx connection pool.
//
// # Use
//
//	s, err := postgres.Open(ctx, os.Getenv("ASU_POSTGRES_DSN"), nil)
//	if err != nil { ... }
//	defer s.Close()
//
// It needs PostgreSQL 12 or later. [Open] applies the schema migrations
// before it returns; [Store.Migrate] applies them on demand, for
// deployments that migrate in a separate step (SkipMigrate in [Options]).
//
// # Single use across replicas
//
// Every decision that must hold across replicas is made by the database,
// never by process memory:
//
//   - State changes are conditional statements, such as
//     UPDATE ... WHERE id = $1 AND state = 'approved' AND expires_at > $2
//     RETURNING ...: of any number of concurrent callers, in any number of
//     processes, exactly one sees the row it needs and wins.
//   - Leases are fenced the same way: Renew, Finish and Reclaim match the
//     fencing token (and Reclaim an expired lease) in their WHERE clause,
//     so a stale owner's statement matches nothing.
//   - A vote towards a ticket's quorum is one conditional UPDATE that
//     appends to the ticket's tally, and approves it when the tally
//     reaches the quorum, only if that approver is not in it yet: votes on
//     one ticket queue on its row lock, so two approvers voting at once
//     both count and one approver voting twice counts once.
//   - Park serializes on transaction-scoped advisory locks taken on the
//     session and then the user, so merging duplicates and counting pending
//     tickets against a cap see every ticket parked before them.
//   - An audit append is one statement that locks the chain head row
//     (SELECT ... FOR UPDATE), links the record to it, hashes it, inserts
//     it and moves the head, so concurrent appends from every replica
//     queue on that row and never fork the chain, and none holds it across
//     a round trip to its client. A state change and its audit row are one
//     transaction: both commit or neither does. A decision takes two round
//     trips: BEGIN with the change, then the append with COMMIT.
//
// # Time
//
// [Store.Now] is the database's clock_timestamp(), the one clock every
// replica shares. The deciding statements (approve, Vote, Consume,
// Reclaim, UseGrant, ParkGranted) compare the caller's time with it in
// their WHERE clause and refuse with [store.ErrClockSkew] beyond
// [store.MaxSkew]. Audit records are stamped with it by the append, never
// earlier than the head.
//
// # Integrity
//
// Every audit record read is checked against its own hash and, when the
// record before it is read too, its link to it. Before an append links to
// the chain head, the database checks the head's row (its hash is the
// head's, its content hashes to it, it links to the row before), in the
// append's own statement, so the check costs no round trip; a row that
// fails fails the decision's transaction with [store.ErrCorrupt]. From
// then on the store refuses every call that decides, writes or reads
// credentials with [store.ErrCorrupt] until it is reopened; the audit
// chain, tickets and grants stay readable. [Open] checks the head and the
// record before it, and a store opened on a damaged head refuses to
// decide from the start. [Store.Check] verifies the
// whole chain and every ticket row. PostgreSQL's page checksums (initdb
// --data-checksums) and amcheck cover the files beneath.
//
// # Durability and failover
//
// Exactly once holds only as long as the database never forgets a commit
// it acknowledged: a consumed approval the database loses is approved
// again in what is left, and its call could run a second time. What each
// setting risks:
//
//   - synchronous_commit = off: a commit returns before its WAL reaches
//     the disk; a crash of the server (not only of the machine) loses the
//     last commits, consumes included. Never use it for this store; [Open]
//     warns through [Options].Logger when it is set.
//   - synchronous_commit = local, or on with synchronous_standby_names
//     empty (the default): a commit waits for the primary's disk only. A
//     crash loses nothing, but a failover to an asynchronous standby loses
//     the commits it had not yet received: the store goes backwards.
//   - synchronous_commit = on (or remote_apply) with a synchronous standby
//     named in synchronous_standby_names, e.g. 'FIRST 1 (standby1)' or
//     'ANY 1 (s1, s2)': a commit returns once a standby has it on disk,
//     so a failover to that standby loses no acknowledged commit. If
//     every synchronous standby is down, commits wait: availability is
//     traded for exactly once. remote_write waits only for the standby's
//     memory, and loses commits if both hosts fail at once.
//
// Three writes that decide nothing commit with synchronous_commit off in
// their own transaction (SET LOCAL), whatever the server's setting: the
// first showing of a card ([Store.Show]), flood counts
// ([Store.AddCounts]) and the signature counter an approval's answer
// advances ([Store.AdvanceSignCountRelaxed]), which the approval's vote
// follows. A sign-in's counter ([Store.AdvanceSignCount]) commits at the
// server's setting: a sign-in relies on it with no decision after it.
// Such a relaxed commit returns before its WAL is
// flushed, and becomes durable with the next commit that waits, by any
// replica: that commit flushes (and sends to a synchronous standby) the
// WAL up to its own record, so every record before it, and recovery
// replays the WAL in order. A crash of the server may lose a showing or a
// count that no decision followed, and nothing else;
// the store contract ([store.Votes], [store.Counters],
// [store.Credentials]) says why each such loss is safe. Every decision
// waits as the settings above say.
//
// [Store.Durability] reports the settings read at Open. Backups go back in
// time by construction: pg_dump takes a consistent logical snapshot, and
// a base backup (pg_basebackup) with archived WAL restores to any point
// in time. Restoring either, or a point-in-time recovery to a moment
// before the last decisions, rolls the store back: committed decisions
// (approvals, consumes, executions) are missing from it. The gate's
// rollback mark, kept outside the store, then refuses to decide and asks
// an operator to reconcile the tickets that may have run since.
//
// # Migrations
//
// The schema is versioned in the table schema_version. Migrations run in
// one transaction under an advisory lock, so replicas that start together
// apply each migration exactly once; a database migrated by a newer build
// is refused with [ErrSchemaVersion].
//
// # Errors
//
// Refusals wrap the store sentinels ([store.ErrNotFound], ...). Failures of
// the database itself wrap [ErrDatabase] and name the SQLSTATE code; no
// error exposes a pgx type. Text fields must be valid UTF-8 without NUL
// bytes (a PostgreSQL rule); other text is refused with [store.ErrInvalid].
//
// # Testing
//
// The tests run the [github.com/agentstepup/asu/store/storetest]
// conformance suite, the multi-process race and the crash test against the
// database named by ASU_POSTGRES_DSN, each test in a schema of its own
// that it drops at the end; without the variable they skip. The
// repository's .ci/postgres.sh starts a throwaway cluster and exports the
// variable:
//
//	source .ci/postgres.sh && go test ./store/postgres/
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentstepup/asu/store"
)

// ErrDatabase is wrapped by every failure of the database or the
// connection to it that is not one of the store's refusals.
var ErrDatabase = errors.New("postgres: database error")

// ErrSchemaVersion is returned when the database schema is newer than this
// build knows, or older when SkipMigrate in [Options] is set.
var ErrSchemaVersion = errors.New("postgres: unexpected schema version")

// Options tunes [Open]. The zero value (or nil) means the defaults.
type Options struct {
	// MaxConns caps the connection pool; zero means pgxpool's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int32
	// Schema, when set, is the schema the store's tables live in: it is
	// created if missing and becomes every connection's search_path. Empty
	// means the DSN's search_path (normally public). Tests use it to give
	// each test its own tables.
	Schema string
	// SkipMigrate makes Open check the schema version instead of applying
	// migrations; call [Store.Migrate] separately.
	SkipMigrate bool
	// Logger, when set, receives a warning at Open when the database's
	// durability settings can lose commits (see [Store.Durability]).
	Logger *slog.Logger
}

// Store is a [store.Store] on PostgreSQL. It is safe for concurrent use,
// and any number of Stores, in any number of processes, may share one
// database.
type Store struct {
	pool      *pgxpool.Pool
	schema    string
	closed    atomic.Bool
	closeOnce sync.Once
	// damage is the first damage seen; once set, deciding calls refuse.
	damage     store.Damage
	durability Durability
	// hub, watchOnce, listening and stopListening serve [Store.Watch].
	hub           store.Hub
	watchOnce     sync.Once
	listening     atomic.Bool
	stopListening atomic.Pointer[context.CancelFunc]
	listeners     sync.WaitGroup
}

var _ store.Store = (*Store)(nil)

// Open connects to the database dsn (a URL or key=value string, as libpq
// takes), applies the migrations unless opts.SkipMigrate, and returns the
// store. A nil opts means the defaults.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parser's message may quote the DSN, password included.
		return nil, fmt.Errorf("postgres: open: %w: cannot parse the connection string", store.ErrInvalid)
	}
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("postgres: open: %w: negative MaxConns", store.ErrInvalid)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Schema != "" {
		if err := checkSchemaName(o.Schema); err != nil {
			return nil, fmt.Errorf("postgres: open: %w", err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.Schema}.Sanitize()
	}
	// pgx prepares every statement; after a few runs PostgreSQL may switch
	// a prepared statement to a generic plan and keep it. One chosen while
	// the tickets table was small is a sequential scan, and it would make
	// the pending-cap check grow with the table until the next ANALYZE.
	// Planning each run with its arguments keeps the partial indexes in use.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w: %v", ErrDatabase, err)
	}
	s := &Store{pool: pool, schema: o.Schema}
	if o.SkipMigrate {
		err = s.checkVersion(ctx)
	} else {
		err = s.Migrate(ctx)
	}
	if err == nil {
		err = s.readDurability(ctx, o.Logger)
	}
	if err == nil {
		s.checkHeadAtOpen(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return s, nil
}

// checkSchemaName accepts the names Options.Schema may take: 1 to 63 ASCII
// letters, digits and underscores, not starting with a digit.
func checkSchemaName(name string) error {
	if len(name) == 0 || len(name) > 63 || (name[0] >= '0' && name[0] <= '9') {
		return fmt.Errorf("%w: schema name must be 1-63 letters, digits or underscores", store.ErrInvalid)
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("%w: schema name must be 1-63 letters, digits or underscores", store.ErrInvalid)
		}
	}
	return nil
}

// Close closes the pool, waiting for calls in flight. Later calls fail
// with [store.ErrClosed]; Close itself may be called again.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if stop := s.stopListening.Load(); stop != nil {
			(*stop)()
		}
		s.listeners.Wait()
		s.hub.ChangedAll()
		s.pool.Close()
	})
	return nil
}

// enter checks, before any work, that the store is open and undamaged
// and ctx is live, for a call that decides, writes or reads credentials.
func (s *Store) enter(ctx context.Context) error {
	if err := s.enterRead(ctx); err != nil {
		return err
	}
	return s.damage.Err()
}

// enterRead is enter for the reads a damaged store still answers: the
// audit chain, tickets and grants.
func (s *Store) enterRead(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}
