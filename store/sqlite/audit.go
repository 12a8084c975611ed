package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// AppendAudit implements [store.AuditLog].
func (s *Store) AppendAudit(ctx context.Context, r receipt.AuditRecord) (receipt.AuditRecord, error) {
	if err := store.CheckAudit(r); err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("sqlite: append audit: %w", err)
	}
	var out receipt.AuditRecord
	err := s.write(ctx, "append audit", func(tx runner) error {
		// BEGIN IMMEDIATE holds the write lock from here to commit, so no
		// other writer reads the same head.
		head, err := auditHead(ctx, tx)
		if err != nil {
			return err
		}
		out, err = store.ChainNext(head, r)
		if err != nil {
			return err
		}
		body, err := encodeRecord(out)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO audit (seq, time, task, hash, body) VALUES (?, ?, ?, ?, ?)`,
			out.Seq, out.Time, out.Task, out.Hash[:], body)
		return dbErr(err)
	})
	if err != nil {
		return receipt.AuditRecord{}, err
	}
	return out, nil
}

// encodeRecord is JSON without HTML escaping, so canonical Args read back
// byte for byte.
func encodeRecord(r receipt.AuditRecord) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return "", fmt.Errorf("%w: audit record", store.ErrInvalid)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), nil
}

func decodeRecord(body string) (receipt.AuditRecord, error) {
	var r receipt.AuditRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("corrupt audit row")
	}
	return r, nil
}

func auditHead(ctx context.Context, q querier) (receipt.AuditRecord, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT body FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return receipt.AuditRecord{}, nil
	}
	if err != nil {
		return receipt.AuditRecord{}, dbErr(err)
	}
	return decodeRecord(body)
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (receipt.AuditRecord, error) {
	if err := s.enter(ctx, "audit head"); err != nil {
		return receipt.AuditRecord{}, err
	}
	r, err := auditHead(ctx, s.reader())
	if err != nil {
		return receipt.AuditRecord{}, s.fail(ctx, "audit head", err)
	}
	return r, nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit range", `time >= ? AND time < ?`, from.UnixMilli(), to.UnixMilli())
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit by task", `task = ?`, task)
}

func (s *Store) auditWhere(ctx context.Context, op, where string, args ...any) ([]receipt.AuditRecord, error) {
	if err := s.enter(ctx, op); err != nil {
		return nil, err
	}
	out, err := func() ([]receipt.AuditRecord, error) {
		rows, err := s.reader().QueryContext(ctx, `SELECT body FROM audit WHERE `+where+` ORDER BY seq`, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []receipt.AuditRecord
		for rows.Next() {
			var body string
			if err := rows.Scan(&body); err != nil {
				return nil, err
			}
			r, err := decodeRecord(body)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
