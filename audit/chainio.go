package audit

import (
	"bufio"
	"encoding/json"
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
// [VerifyChain], or read and verify a long export in constant memory with
// [NewVerifier]. Failures wrap [ErrMalformed] and name the line.
func ReadChain(r io.Reader) ([]Record, error) {
	l := newLines(r)
	var out []Record
	for line := 1; l.sc.Scan(); line++ {
		if err := l.read(line, l.sc.Bytes()); err != nil {
			return nil, err
		}
		out = append(out, l.rec)
	}
	if err := l.scanErr(len(out)); err != nil {
		return nil, err
	}
	return out, nil
}
