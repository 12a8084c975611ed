package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

// runner runs statements through the store's cache of prepared
// statements, inside a write's transaction when w is set. Parsing SQL
// costs more than most of the statements themselves, so each query text
// is prepared once per connection.
type runner struct {
	s *Store
	// w is the connection of the write transaction the statements run
	// in; nil outside one.
	w *writeConn
	// relaxed says w is the relaxed connection, whose commits do not wait
	// for the disk.
	relaxed bool
	// long says the statements may run long (a read of a whole audit
	// chain): they keep the caller's cancellation.
	long bool
}

// short is the context a short statement runs under: ctx without its
// cancellation, once ctx is checked. With a cancellable context the
// driver starts a goroutine per statement to interrupt it, and
// database/sql one per query to close its rows; on a statement of a
// few microseconds those goroutines, and the wake-ups between cores
// they cost, were most of its time. A statement the store runs by key
// or under a limit is bounded, and it is never left waiting on the
// write lock past the busy timeout; a caller whose context ends meets
// it before the next statement.
func (r runner) short(ctx context.Context) context.Context {
	if r.long || ctx.Err() != nil {
		return ctx // the driver answers a context already ended at once
	}
	return context.WithoutCancel(ctx)
}

// reader runs statements outside a transaction.
func (s *Store) reader() runner { return runner{s: s} }

// longReader is reader for a read that may run long: it keeps the
// caller's cancellation (see [runner.short]).
func (s *Store) longReader() runner { return runner{s: s, long: true} }

// stmt returns the prepared statement for query, on the write's
// connection when there is one.
func (r runner) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if r.w != nil {
		return r.w.stmt(ctx, query)
	}
	v, ok := r.s.stmts.Load(query)
	if !ok {
		st, err := r.s.db.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		var loaded bool
		if v, loaded = r.s.stmts.LoadOrStore(query, st); loaded {
			_ = st.Close()
		}
	}
	return v.(*sql.Stmt), nil
}

// script runs q, which may hold several statements, unprepared (preparing
// compiles only the first), in the write's transaction.
func (r runner) script(ctx context.Context, q string) error {
	_, err := r.w.conn.ExecContext(r.short(ctx), q)
	return err
}

// ExecContext is sql.Tx.ExecContext through the cache.
func (r runner) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = r.short(ctx)
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// changes runs a write through the cache and returns how many rows it
// changed: the conditional updates tell success from refusal by it.
func (r runner) changes(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := r.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, dbErr(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr(err)
	}
	return n, nil
}

// QueryContext is sql.Tx.QueryContext through the cache.
func (r runner) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = r.short(ctx)
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is sql.Tx.QueryRowContext through the cache. When the
// statement cannot be prepared it runs the query unprepared, so the Row
// reports the error.
func (r runner) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = r.short(ctx)
	st, err := r.stmt(ctx, query)
	if err != nil {
		if r.w != nil && r.w.conn != nil {
			return r.w.conn.QueryRowContext(ctx, query, args...)
		}
		return r.s.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// closeStmts closes every cached statement.
func (s *Store) closeStmts() {
	s.stmts.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
}

// writeConn is the connection one kind of write (durable or relaxed)
// runs on, taken from its pool at the first write and held while the
// store is open. Writes take turns on the writer semaphore, so one
// connection serves them all, and only the holder of the semaphore
// touches it. Its transactions are BEGIN IMMEDIATE and COMMIT run as
// statements: a transaction of database/sql's starts a goroutine to
// watch its context, and another for each query in it, and on
// statements of a few microseconds those goroutines, and the wake-ups
// between cores they cost, were a large part of a write. Its statements
// are prepared on it once.
type writeConn struct {
	db    *sql.DB
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// exec runs q (BEGIN, COMMIT) on the connection, taking one from the pool
// first when the write has none.
func (w *writeConn) exec(ctx context.Context, q string) error {
	if w.conn == nil {
		c, err := w.db.Conn(ctx)
		if err != nil {
			return err
		}
		w.conn, w.stmts = c, map[string]*sql.Stmt{}
	}
	_, err := w.conn.ExecContext(ctx, q)
	return err
}

// stmt returns query prepared on the connection.
func (w *writeConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// rollback ends the transaction under way. A connection that cannot roll
// back is dropped, so no later write, and no reader, inherits what it
// holds.
func (w *writeConn) rollback() {
	if w.conn == nil {
		return
	}
	if _, err := w.conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		w.drop()
	}
}

// drop closes the connection's statements and discards the connection
// itself rather than return it to the pool; the next write takes another.
func (w *writeConn) drop() {
	if w.conn == nil {
		return
	}
	for _, st := range w.stmts {
		_ = st.Close()
	}
	// Raw discards a connection whose function answers ErrBadConn.
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = w.conn.Close()
	w.conn, w.stmts = nil, nil
}
