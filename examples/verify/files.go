package main

import (
	"fmt"
	"io"
	"os"

	"github.com/agentstepup/asu/receipt"
)

// Limits on the files the commands read whole, checked before a file is
// read: a file over its limit is refused with an error naming it and the
// limit, and nothing of it is read into memory. An audit chain verified
// with `verify audit` is read as a stream, a line at a time (each line at
// most audit.MaxLine), and has no limit.
const (
	maxKeyFile        = 64 << 10                                    // --key, --gate-key: a PEM key, a COSE_Key or a public key ring
	maxCheckpointFile = 64 << 10                                    // --checkpoint
	maxReceiptFile    = receipt.MaxSize                             // verify receipt FILE
	maxQuorumFile     = receipt.MaxQuorumReceipts * receipt.MaxSize // verify quorum FILE
	maxStaffingAudit  = 1 << 30                                     // verify staffing --audit: read whole, as records
)

// readFile reads the file name, what it holds for the error text, refusing
// it unread when it is larger than limit bytes (by its size, and again as
// it is read, for a file that grows or has no size, a pipe say).
func readFile(name, what string, limit int64) ([]byte, error) {
	f, err := openLimited(name, what, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(name, what, limit)
	}
	return b, nil
}

// openLimited opens the file name, refusing it when its size is over
// limit bytes.
func openLimited(name, what string, limit int64) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		f.Close()
		return nil, tooLarge(name, what, limit)
	}
	return f, nil
}

// limitedReader reads r, failing with over once it has read more than
// left bytes.
type limitedReader struct {
	r    io.Reader
	left int64
	over error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.over
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, l.over
	}
	return n, err
}

func tooLarge(name, what string, limit int64) error {
	return fmt.Errorf("read %s: %s is over %d bytes, the limit for a %s", what, quoted(name), limit, what)
}
