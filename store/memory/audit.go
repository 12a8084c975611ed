package memory

import (
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
		return receipt.AuditRecord{}, fmt.Errorf("append audit: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("append audit: %w", err)
	}
	defer s.mu.Unlock()
	recs, err := s.chain(func() (receipt.AuditRecord, bool) { return r, true })
	if err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("append audit: %w", err)
	}
	s.commit(recs)
	return cloneRecord(recs[0]), nil
}

// AuditHead implements [store.AuditLog].
func (s *Store) AuditHead(ctx context.Context) (receipt.AuditRecord, error) {
	if err := s.lock(ctx); err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("audit head: %w", err)
	}
	defer s.mu.Unlock()
	if len(s.audit) == 0 {
		return receipt.AuditRecord{}, nil
	}
	return cloneRecord(s.audit[len(s.audit)-1]), nil
}

// AuditRange implements [store.AuditLog].
func (s *Store) AuditRange(ctx context.Context, from, to time.Time) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit range", func(r *receipt.AuditRecord) bool {
		return r.Time >= from.UnixMilli() && r.Time < to.UnixMilli()
	})
}

// AuditSeq implements [store.AuditLog].
func (s *Store) AuditSeq(ctx context.Context, from, to uint64) ([]receipt.AuditRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("audit seq: %w", err)
	}
	defer s.mu.Unlock()
	// Seq n is at index n-1: the chain starts at 1 and never has gaps.
	lo, hi := min(max(from, 1)-1, uint64(len(s.audit))), min(max(to, 1)-1, uint64(len(s.audit)))
	var out []receipt.AuditRecord
	for i := lo; i < hi; i++ {
		out = append(out, cloneRecord(s.audit[i]))
	}
	return out, nil
}

// AuditByTask implements [store.AuditLog].
func (s *Store) AuditByTask(ctx context.Context, task string) ([]receipt.AuditRecord, error) {
	return s.auditWhere(ctx, "audit by task", func(r *receipt.AuditRecord) bool { return r.Task == task })
}

func (s *Store) auditWhere(ctx context.Context, op string, keep func(*receipt.AuditRecord) bool) ([]receipt.AuditRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer s.mu.Unlock()
	var out []receipt.AuditRecord
	for i := range s.audit {
		if keep(&s.audit[i]) {
			out = append(out, cloneRecord(s.audit[i]))
		}
	}
	return out, nil
}

func cloneRecord(r receipt.AuditRecord) receipt.AuditRecord {
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
