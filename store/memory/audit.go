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
	var head receipt.AuditRecord
	if n := len(s.audit); n > 0 {
		head = s.audit[n-1]
	}
	r, err := store.ChainNext(head, r)
	if err != nil {
		return receipt.AuditRecord{}, fmt.Errorf("append audit: %w", err)
	}
	s.audit = append(s.audit, r)
	return cloneRecord(r), nil
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
