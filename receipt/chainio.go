package receipt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentstepup/asu/canon"
)

// MaxAuditLine bounds one line of an exported audit chain: a record with
// arguments at canon's default size limit, and the rest.
const MaxAuditLine = canon.DefaultMaxBytes + 64<<10

// WriteChain writes records as JSON Lines, one [AuditRecord] per line in
// order, the export format [ReadChain] reads and `verify audit` checks.
func WriteChain(w io.Writer, records []AuditRecord) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // one value and a newline per Encode
	enc.SetEscapeHTML(false)
	for i, r := range records {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("audit record %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write audit chain: %w", err)
	}
	return nil
}

// ReadChain reads an audit chain exported by [WriteChain]: one JSON object
// per line, each accepted by canon (no duplicate keys) and holding only
// [AuditRecord] fields. It does not verify the chain; pass the records to
// [VerifyChain]. Failures wrap [ErrMalformed] and name the line.
func ReadChain(r io.Reader) ([]AuditRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxAuditLine)
	var out []AuditRecord
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, fmt.Errorf("%w: audit chain line %d is empty", ErrMalformed, line)
		}
		if _, err := (canon.Limits{MaxBytes: MaxAuditLine}).Canonicalize(b); err != nil {
			return nil, fmt.Errorf("%w: audit chain line %d: %w", ErrMalformed, line, err)
		}
		var rec AuditRecord
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: audit chain line %d: %s", ErrMalformed, line, decodeProblem(err))
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: audit chain line %d too long", ErrMalformed, len(out)+1)
		}
		return nil, fmt.Errorf("read audit chain: %w", err)
	}
	return out, nil
}
