package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentstepup/asu/store"
)

// fail turns err from op into the error the caller sees: store sentinels
// and context errors pass through wrapped; the database's own errors are
// mapped to sentinels where one fits and to [ErrDatabase] otherwise. pgx
// error values are never wrapped, so none escapes through errors.As; their
// messages are not kept either, since some quote the values in a row.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	return s.damage.Note(s.failed(ctx, op, err))
}

// failed is fail before the damage is noted.
func (s *Store) failed(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if isSentinel(err) {
		return fmt.Errorf("%s: %w", op, err)
	}
	// pgx wraps context errors in its own types: wrap only the context's.
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", op, cerr)
	}
	for _, cerr := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, cerr) {
			return fmt.Errorf("%s: %w", op, cerr)
		}
	}
	if s.closed.Load() {
		return fmt.Errorf("%s: %w", op, store.ErrClosed)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%s: %w", op, store.ErrDuplicate)
		case "22021", "22P05": // character_not_in_repertoire, untranslatable_character
			return fmt.Errorf("%s: %w: text must be UTF-8 without NUL bytes", op, store.ErrInvalid)
		case "23514", "23502", "22003": // check_violation, not_null_violation, numeric_value_out_of_range
			return fmt.Errorf("%s: %w: refused by a constraint (SQLSTATE %s)", op, store.ErrInvalid, pgErr.Code)
		case "54000", "22001": // program_limit_exceeded, string_data_right_truncation
			return fmt.Errorf("%s: %w (SQLSTATE %s)", op, store.ErrTooLarge, pgErr.Code)
		case "XX001", "XX002": // data_corrupted (ours too: see queryAppend), index_corrupted
			if strings.HasPrefix(pgErr.Message, "audit seq ") { // ours: names a seq, never a value
				return fmt.Errorf("%s: %w: %s", op, store.ErrCorrupt, pgErr.Message)
			}
			return fmt.Errorf("%s: %w (SQLSTATE %s)", op, store.ErrCorrupt, pgErr.Code)
		}
		return fmt.Errorf("%s: %w: SQLSTATE %s", op, ErrDatabase, pgErr.Code)
	}
	// Connection failures: the message names the server, never a password.
	return fmt.Errorf("%s: %w: %v", op, ErrDatabase, err)
}

// isSentinel reports whether err already wraps one of the refusals this
// package returns (made by this package, never wrapping a pgx value), so
// that it passes through unchanged.
func isSentinel(err error) bool {
	for _, s := range []error{
		store.ErrNotFound, store.ErrDuplicate, store.ErrInvalid, store.ErrTooLarge, store.ErrResolved,
		store.ErrExpired, store.ErrNotApproved, store.ErrConsumed, store.ErrFenced, store.ErrLeaseLive,
		store.ErrRevoked, store.ErrClockSkew, store.ErrPendingCap, store.ErrCounter, store.ErrGrantUsedUp,
		store.ErrClosed, store.ErrCorrupt, ErrSchemaVersion, ErrDatabase,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
