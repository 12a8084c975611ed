package memory

import (
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
		return audit.Record{}, fmt.Errorf("append audit: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return audit.Record{}, fmt.Errorf("append audit: %w", err)
	}
	defer s.mu.Unlock()
	recs, err := s.chain(func() (audit.Record, bool) { return r, true })
	if err != nil {
		return audit.Record{}, fmt.Errorf("append audit: %w", err)
	}
	s.commit(recs)
	return cloneRecord(recs[0]), nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (audit.Record, error) {
	if err := s.lockRead(ctx); err != nil {
		return audit.Record{}, fmt.Errorf("audit head: %w", err)
	}
	defer s.mu.Unlock()
	last := s.audit.last()
	if last == nil {
		return audit.Record{}, nil
	}
	if err := store.CheckHead(*last, nil, int64(s.audit.len())); err != nil {
		return audit.Record{}, fmt.Errorf("audit head: %w", s.damage.Note(err))
	}
	return cloneRecord(*last), nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit range", func(r *audit.Record) bool {
		return r.Time >= from.UnixMilli() && r.Time < to.UnixMilli()
	})
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]audit.Record, error) {
	if err := s.lockRead(ctx); err != nil {
		return nil, fmt.Errorf("audit seq: %w", err)
	}
	defer s.mu.Unlock()
	// Seq n is at index n-1: the chain starts at 1 and never has gaps.
	n := uint64(s.audit.len())
	lo, hi := min(max(from, 1)-1, n), min(max(to, 1)-1, n)
	var out []audit.Record
	for i := lo; i < hi; i++ {
		out = append(out, cloneRecord(*s.audit.at(int(i))))
	}
	if err := store.CheckRead(out); err != nil {
		return nil, fmt.Errorf("audit seq: %w", s.damage.Note(err))
	}
	return out, nil
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]audit.Record, error) {
	return s.auditWhere(ctx, "audit by task", func(r *audit.Record) bool { return r.Task == task })
}

func (s *Store) auditWhere(ctx context.Context, op string, keep func(*audit.Record) bool) ([]audit.Record, error) {
	if err := s.lockRead(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer s.mu.Unlock()
	var out []audit.Record
	for i := range s.audit.len() {
		if r := s.audit.at(i); keep(r) {
			out = append(out, cloneRecord(*r))
		}
	}
	if err := store.CheckRead(out); err != nil {
		return nil, fmt.Errorf("%s: %w", op, s.damage.Note(err))
	}
	return out, nil
}

// auditBlock is how many records a block of the audit log holds.
const auditBlock = 1024

// auditLog is the audit chain in blocks of auditBlock records: appending
// never copies the records already kept, as growing one slice of them
// would, again and again, as the chain grows.
type auditLog struct {
	blocks [][]audit.Record // all full but the last
	n      int
}

func (l *auditLog) len() int { return l.n }

// at returns the record at index i, 0 <= i < l.len().
func (l *auditLog) at(i int) *audit.Record {
	return &l.blocks[i/auditBlock][i%auditBlock]
}

// last returns the newest record, or nil when the log is empty.
func (l *auditLog) last() *audit.Record {
	if l.n == 0 {
		return nil
	}
	return l.at(l.n - 1)
}

func (l *auditLog) append(r audit.Record) {
	if l.n%auditBlock == 0 {
		// The first block grows as a slice does, so a small log stays
		// small; later ones are allocated whole.
		c := auditBlock
		if l.n == 0 {
			c = 0
		}
		l.blocks = append(l.blocks, make([]audit.Record, 0, c))
	}
	b := &l.blocks[len(l.blocks)-1]
	*b = append(*b, r)
	l.n++
}

func cloneRecord(r audit.Record) audit.Record {
	if r.Args != nil {
		r.Args = append(json.RawMessage{}, r.Args...)
	}
	if r.Taint != nil {
		r.Taint = append([]string{}, r.Taint...)
	}
	if r.Principal.Delegations != nil {
		r.Principal.Delegations = append([]string{}, r.Principal.Delegations...)
	}
	return r
}
