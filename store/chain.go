package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// ChainNext returns r ready to append after head (the zero record for an
// empty chain) at now, the store's clock: Time now in Unix milliseconds but
// never before head.Time, Args in canonical form, Seq head.Seq+1, PrevHash
// head.Hash and Hash from [audit.Record.ComputeHash]. Backends call
// it inside the transaction that read head and inserts the result. It fails
// with [ErrInvalid] when r cannot be hashed, such as Args canon refuses or
// text that is not UTF-8, and with [ErrInvalid] or [ErrTooLarge] when
// [CheckAudit] refuses r.
func ChainNext(head, r audit.Record, now time.Time) (audit.Record, error) {
	if err := CheckAudit(r); err != nil {
		return audit.Record{}, err
	}
	r.Time = max(now.UnixMilli(), head.Time)
	if len(r.Args) > 0 {
		c, err := canon.Canonicalize(r.Args)
		if err != nil {
			return audit.Record{}, fmt.Errorf("%w: audit args: %w", ErrInvalid, err)
		}
		r.Args = json.RawMessage(c)
	} else {
		r.Args = nil
	}
	if r.Taint != nil {
		r.Taint = append([]string{}, r.Taint...)
	}
	if r.Principal.Delegations != nil {
		r.Principal.Delegations = append([]string{}, r.Principal.Delegations...)
	}
	r.Seq, r.PrevHash = head.Seq+1, head.Hash
	h, err := r.ComputeHash()
	if err != nil {
		return audit.Record{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	r.Hash = h
	return r, nil
}
