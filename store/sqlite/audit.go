package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
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
		var err error
		out, err = s.appendRecord(ctx, tx, r)
		return err
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

// decodeRecord reads the audit row seq, whose hash column is hash, and
// checks that the body is that record: its seq and hash are the row's.
// The record's own hash is checked by the caller ([store.CheckRead]).
func decodeRecord(seq int64, hash []byte, body string) (receipt.AuditRecord, error) {
	var r receipt.AuditRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return receipt.AuditRecord{}, store.CorruptRow("audit", fmt.Sprint(seq), "the record does not parse")
	}
	if r.Seq != seq {
		return receipt.AuditRecord{}, store.CorruptRow("audit", fmt.Sprint(seq), fmt.Sprintf("the record holds seq %d", r.Seq))
	}
	if !bytes.Equal(hash, r.Hash[:]) {
		return receipt.AuditRecord{}, store.CorruptRow("audit", fmt.Sprint(seq), "the hash column differs from the record's hash")
	}
	return r, nil
}

// auditHead reads the chain head and checks it ([store.CheckHead]),
// against the record before it when link is set: an append never links
// to a record that is not what it claims to be.
func auditHead(ctx context.Context, q querier, link bool) (receipt.AuditRecord, error) {
	limit := 1
	if link {
		limit = 2
	}
	rows, err := q.QueryContext(ctx, `SELECT seq, hash, body FROM audit ORDER BY seq DESC LIMIT ?`, limit)
	if err != nil {
		return receipt.AuditRecord{}, dbErr(err)
	}
	defer rows.Close()
	var recs []receipt.AuditRecord
	for rows.Next() {
		var (
			seq  int64
			hash []byte
			body string
		)
		if err := rows.Scan(&seq, &hash, &body); err != nil {
			return receipt.AuditRecord{}, dbErr(err)
		}
		r, err := decodeRecord(seq, hash, body)
		if err != nil {
			return receipt.AuditRecord{}, err
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return receipt.AuditRecord{}, dbErr(err)
	}
	if len(recs) == 0 {
		return receipt.AuditRecord{}, nil
	}
	var prev *receipt.AuditRecord
	if len(recs) == 2 {
		prev = &recs[1] // a gap between them is damage too: CheckRecord refuses it
	}
	if err := store.CheckHead(recs[0], prev, recs[0].Seq); err != nil {
		return receipt.AuditRecord{}, err
	}
	return recs[0], nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (receipt.AuditRecord, error) {
	if err := s.enterRead(ctx, "audit head"); err != nil {
		return receipt.AuditRecord{}, err
	}
	r, err := auditHead(ctx, s.reader(), false)
	if err != nil {
		return receipt.AuditRecord{}, s.fail(ctx, "audit head", err)
	}
	return r, nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit range", `time >= ? AND time < ?`, from.UnixMilli(), to.UnixMilli())
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]receipt.AuditRecord, error) {
	// Seq is an int64 column; bounds past it select nothing more.
	clamp := func(v uint64) int64 { return int64(min(v, 1<<63-1)) }
	return s.auditWhere(ctx, "audit seq", `seq >= ? AND seq < ?`, clamp(from), clamp(to))
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit by task", `task = ?`, task)
}

func (s *Store) auditWhere(ctx context.Context, op, where string, args ...any) ([]receipt.AuditRecord, error) {
	if err := s.enterRead(ctx, op); err != nil {
		return nil, err
	}
	out, err := func() ([]receipt.AuditRecord, error) {
		rows, err := s.reader().QueryContext(ctx, `SELECT seq, hash, body FROM audit WHERE `+where+` ORDER BY seq`, args...)
		if err != nil {
			return nil, dbErr(err)
		}
		defer rows.Close()
		var out []receipt.AuditRecord
		for rows.Next() {
			var (
				seq  int64
				hash []byte
				body string
			)
			if err := rows.Scan(&seq, &hash, &body); err != nil {
				return nil, dbErr(err)
			}
			r, err := decodeRecord(seq, hash, body)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return nil, dbErr(err)
		}
		return out, store.CheckRead(out)
	}()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}
