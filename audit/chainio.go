package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentstepup/asu/canon"
)

// MaxLine bounds one line of an exported audit chain: a record with
// arguments at canon's default size limit, and the rest.
const MaxLine = canon.DefaultMaxBytes + 64<<10

// WriteChain writes records as JSON Lines, one [Record] per line in
// order, the export format [ReadChain] reads and `verify audit` checks.
func WriteChain(w io.Writer, records []Record) error {
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
// [Record] fields. It does not verify the chain; pass the records to
// [VerifyChain]. Failures wrap [ErrMalformed] and name the line.
func ReadChain(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var out []Record
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, fmt.Errorf("%w: audit chain line %d is empty", ErrMalformed, line)
		}
		if _, err := (canon.Limits{MaxBytes: MaxLine}).Canonicalize(b); err != nil {
			return nil, fmt.Errorf("%w: audit chain line %d: %w", ErrMalformed, line, err)
		}
		var rec Record
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
