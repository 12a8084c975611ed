package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentstepup/asu/canon"
)

// Size bounds of a record, derived from asu's one size table (package
// canon). A record holds at most a call's arguments (canon.MaxArgs, when
// a gate records them), a reason and a result (canon.MaxText each) and
// labels, identifiers and digests (MaxRecord leaves 1 MiB for them); its
// hash refuses a longer canonical form with canon.ErrTooLarge, so a store
// never appends a record a reader would refuse. Exported, a line is at
// most twice its canonical form (encoding/json escapes U+2028 and U+2029,
// which canonical JSON writes as themselves).
const (
	MaxRecord = canon.MaxArgs + 2*canon.MaxText + 1<<20
	MaxLine   = 2 * MaxRecord
)

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
// [Record] fields, every member at every level named exactly as its field
// (no member in another case or with a folded letter, which encoding/json
// alone would read as the field). The record on line n is the one
// [VerifyChain] numbers n. It does not verify the chain; pass the records
// to [VerifyChain], or read and verify a long export in constant memory
// with [NewVerifier]. Failures wrap [ErrMalformed] and name the line.
func ReadChain(r io.Reader) ([]Record, error) {
	l := newLines(r)
	var out []Record
	for l.sc.Scan() {
		if err := l.read(l.sc.Bytes()); err != nil {
			return nil, err
		}
		out = append(out, l.rec)
	}
	if err := l.scanErr(); err != nil {
		return nil, err
	}
	return out, nil
}
