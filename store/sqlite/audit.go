package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// AppendAudit implements [store.AuditLog].
func (s *Store) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	if err := store.CheckAudit(r); err != nil {
		return audit.Record{}, fmt.Errorf("sqlite: append audit: %w", err)
	}
	var out audit.Record
	err := s.write(ctx, "append audit", func(tx runner) error {
		var err error
		out, err = s.appendRecord(ctx, tx, r)
		return err
	})
	if err != nil {
		return audit.Record{}, err
	}
	return out, nil
}

// encodeRecord is JSON without HTML escaping, so canonical Args read back
// byte for byte.
func encodeRecord(r audit.Record) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return "", fmt.Errorf("%w: audit record", store.ErrInvalid)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// auditRowCols are the columns of an audit row, in the order auditRow.scan
// reads them.
const auditRowCols = `seq, time, task, hash, body`

// auditRow is one row of the audit table: the record's body and the
// columns kept beside it for lookups.
type auditRow struct {
	seq, time int64
	task      string
	hash      []byte
	body      string
}

func (w *auditRow) scan(row scanner) error {
	return row.Scan(&w.seq, &w.time, &w.task, &w.hash, &w.body)
}

// decode reads the record in the row and checks that it is the row's:
// its seq, time, task and hash are the columns'. The record's own hash is
// checked by the caller ([store.CheckRead]).
func (w auditRow) decode() (audit.Record, error) {
	var r audit.Record
	bad := func(why string) (audit.Record, error) {
		return audit.Record{}, store.CorruptRow("audit", fmt.Sprint(w.seq), why)
	}
	if err := json.Unmarshal([]byte(w.body), &r); err != nil {
		return bad("the record does not parse")
	}
	switch {
	case r.Seq != w.seq:
		return bad(fmt.Sprintf("the record holds seq %d", r.Seq))
	case !bytes.Equal(w.hash, r.Hash[:]):
		return bad("the hash column differs from the record's hash")
	case r.Time != w.time || r.Task != w.task:
		return bad("the time or task column differs from the record's")
	}
	return r, nil
}

// auditHead reads the chain head and checks it ([store.CheckHead]),
// against the record before it when link is set: an append never links
// to a record that is not what it claims to be.
func auditHead(ctx context.Context, q querier, link bool) (audit.Record, error) {
	limit := 1
	if link {
		limit = 2
	}
	rows, err := q.QueryContext(ctx, `SELECT `+auditRowCols+` FROM audit ORDER BY seq DESC LIMIT ?`, limit)
	if err != nil {
		return audit.Record{}, dbErr(err)
	}
	defer rows.Close()
	var recs []audit.Record
	for rows.Next() {
		var w auditRow
		if err := w.scan(rows); err != nil {
			return audit.Record{}, dbErr(err)
		}
		if len(recs) == 1 {
			// The head links to the record before by its seq and hash
			// alone; that record was checked when it was the head.
			prev := audit.Record{Seq: w.seq}
			copy(prev.Hash[:], w.hash)
			recs = append(recs, prev)
			continue
		}
		r, err := w.decode()
		if err != nil {
			return audit.Record{}, err
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return audit.Record{}, dbErr(err)
	}
	if len(recs) == 0 {
		return audit.Record{}, nil
	}
	var prev *audit.Record
	if len(recs) == 2 {
		prev = &recs[1] // a gap between them is damage too: CheckRecord refuses it
	}
	if err := store.CheckHead(recs[0], prev, recs[0].Seq); err != nil {
		return audit.Record{}, err
	}
	return recs[0], nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (audit.Record, error) {
	if err := s.enterRead(ctx, "audit head"); err != nil {
		return audit.Record{}, err
	}
	r, err := auditHead(ctx, s.reader(), false)
	if err != nil {
		return audit.Record{}, s.fail(ctx, "audit head", err)
	}
	return r, nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit range", `time >= ? AND time < ?`, from.UnixMilli(), to.UnixMilli())
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]audit.Record, error) {
	// Seq is an int64 column; bounds past it select nothing more.
	clamp := func(v uint64) int64 { return int64(min(v, 1<<63-1)) }
	return s.auditWhere(ctx, "audit seq", `seq >= ? AND seq < ?`, clamp(from), clamp(to))
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit by task", `task = ?`, task)
}

func (s *Store) auditWhere(ctx context.Context, op, where string, args ...any) ([]audit.Record, error) {
	if err := s.enterRead(ctx, op); err != nil {
		return nil, err
	}
	out, err := func() ([]audit.Record, error) {
		rows, err := s.longReader().QueryContext(ctx, `SELECT `+auditRowCols+` FROM audit WHERE `+where+` ORDER BY seq`, args...)
		if err != nil {
			return nil, dbErr(err)
		}
		defer rows.Close()
		var out []audit.Record
		for rows.Next() {
			var w auditRow
			if err := w.scan(rows); err != nil {
				return nil, dbErr(err)
			}
			r, err := w.decode()
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
