package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// runner runs statements through the store's cache of prepared
// statements, inside tx when it is set. Parsing SQL costs more than most of
// the statements themselves, so each query text is prepared once per
// connection.
type runner struct {
	s  *Store
	tx *sql.Tx
	// relaxed says tx is on the store's relaxed connection, whose
	// statements are cached apart.
	relaxed bool
}

// reader runs statements outside a transaction.
func (s *Store) reader() runner { return runner{s: s} }

// stmt returns the prepared statement for query, bound to the transaction
// when there is one.
func (r runner) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db, stmts := r.s.db, &r.s.stmts
	if r.relaxed {
		db, stmts = r.s.relaxed, &r.s.relaxedStmts
	}
	v, ok := stmts.Load(query)
	if !ok {
		st, err := db.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		var loaded bool
		if v, loaded = stmts.LoadOrStore(query, st); loaded {
			_ = st.Close()
		}
	}
	st := v.(*sql.Stmt)
	if r.tx != nil {
		return r.tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

// ExecContext is sql.Tx.ExecContext through the cache.
func (r runner) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
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
	st, err := r.stmt(ctx, query)
	if err != nil {
		if r.tx != nil {
			return r.tx.QueryRowContext(ctx, query, args...)
		}
		return r.s.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// closeStmts closes every cached statement.
func (s *Store) closeStmts() {
	for _, m := range []*sync.Map{&s.stmts, &s.relaxedStmts} {
		m.Range(func(k, v any) bool {
			_ = v.(*sql.Stmt).Close()
			m.Delete(k)
			return true
		})
	}
}
