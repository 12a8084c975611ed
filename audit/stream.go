package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/agentstepup/asu/canon"
)

// VerifyOptions say where a streamed chain must start, as the arguments of
// [VerifyChain], [VerifyChainFrom] and [VerifyChainFromKeys] do. The zero
// value verifies a chain from its first record.
type VerifyOptions struct {
	// Anchor is the hash of the record before the first one read, which
	// the caller verified or kept itself; zero means the chain starts at
	// its first record.
	Anchor canon.Digest
	// Checkpoint, when set, is a checkpoint the gate signed: the chain
	// either continues right after it or starts at the first record and
	// passes through it, as [VerifyChainFrom] says. Its signature is
	// checked, before any record is read, with GateKey, or else with Keys
	// as the key stood at At. Anchor must then be zero.
	Checkpoint *SignedCheckpoint
	GateKey    ed25519.PublicKey
	Keys       CheckpointKeys
	At         time.Time
}

// Summary is what a [Verifier] read: how many records, the first and
// last sequence numbers, the first record's PrevHash and the last one's
// hash (the head).
type Summary struct {
	Records   int          `json:"records"`
	FirstSeq  int64        `json:"first_seq"`
	LastSeq   int64        `json:"last_seq"`
	FirstPrev canon.Digest `json:"first_prev"`
	Head      canon.Digest `json:"head"`
}

// Genesis reports whether the records read start the chain: the first is
// seq 1 and links to nothing.
func (s Summary) Genesis() bool { return s.Records > 0 && s.FirstSeq == 1 && s.FirstPrev.IsZero() }

// Verifier reads an exported chain (the JSON Lines [WriteChain] writes)
// and verifies it as it reads: each record is parsed as strictly as
// [ReadChain] parses it, then checked against the one before it (the
// sequence, the link, its own hash) as [VerifyChain] checks a slice. It
// holds one record and one line at a time, so its memory does not grow
// with the chain, and it accepts exactly the exports that ReadChain
// followed by VerifyChain (or VerifyChainFrom, VerifyChainFromKeys)
// accepts.
//
// A Verifier is used once, by one goroutine.
type Verifier struct {
	lines
	opts VerifyOptions
	err  error
	sum  Summary
	used bool

	prev   canon.Digest
	cp     *Checkpoint
	passed bool // a chain from the first record reached the checkpoint
}

// lines reads an export line by line into one record.
type lines struct {
	sc     *bufio.Scanner
	line   int // the line read last, from 1
	rec    Record
	fast   bool // rec was read by the fast parser, which checked its text is UTF-8
	intern map[string]string
	last   [lastFields]string // the last value of fields that repeat
}

func newLines(r io.Reader) lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxLine)
	return lines{sc: sc, intern: map[string]string{}}
}

// scanErr is the failure of the scanner after the last line, if any.
func (l *lines) scanErr() error {
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			l.line++ // the scanner stopped inside the next line
			return fmt.Errorf("%w: line %d is over %d bytes", ErrMalformed, l.line, MaxLine)
		}
		return fmt.Errorf("read audit chain: %w", err)
	}
	return nil
}

// NewVerifier returns a Verifier of the chain r holds. Nothing is read
// until [Verifier.All] or [Verifier.Verify].
func NewVerifier(r io.Reader, opts VerifyOptions) *Verifier {
	return &Verifier{lines: newLines(r), opts: opts}
}

// Verify reads the whole chain and returns what it read, or the first
// failure: a [*ChainBreak] (wrapping [ErrChainBroken]), an error wrapping
// [ErrMalformed] for a line that is not a record, or one wrapping
// [ErrCheckpoint].
func (v *Verifier) Verify() (Summary, error) {
	for range v.All() {
	}
	return v.sum, v.err
}

// All yields each record once it verified against the records before it.
// The record is the Verifier's own and is overwritten by the next one:
// copy what must outlive the step. Iteration stops at the first failure,
// which [Verifier.Err] then returns; a chain that ends too soon for a
// checkpoint it should pass through, or holds no record at all while one
// is given, fails after the last record.
func (v *Verifier) All() iter.Seq[*Record] {
	return func(yield func(*Record) bool) {
		if v.used {
			if v.err == nil {
				v.err = errors.New("audit: a Verifier reads its chain once")
			}
			return
		}
		v.used = true
		if v.err = v.start(); v.err != nil {
			return
		}
		for v.sc.Scan() {
			if v.err = v.read(v.sc.Bytes()); v.err != nil {
				return
			}
			if v.err = v.check(v.line - 1); v.err != nil {
				return
			}
			if !yield(&v.rec) {
				return
			}
		}
		if v.err = v.scanErr(); v.err != nil {
			return
		}
		switch {
		case v.cp != nil && v.sum.Records == 0:
			v.err = errNoRecords(v.cp.Seq)
		case v.cp != nil && !v.passed && v.sum.FirstSeq == 1:
			v.err = fmt.Errorf("%w: the chain ends at seq %d (line %d), before the checkpoint at seq %d", ErrCheckpoint, v.sum.LastSeq, v.line, v.cp.Seq)
		}
	}
}

// Err returns the first failure of the records read so far, or nil.
func (v *Verifier) Err() error { return v.err }

// Summary returns what has been read and verified so far.
func (v *Verifier) Summary() Summary { return v.sum }

// Line returns the line of the export read last, from 1: after a failure,
// the line it is about (for a chain that ends too soon, its last line),
// or 0 when it is about no line (a checkpoint that does not verify, an
// export with no line). The record on line n is the one a [ChainBreak]
// numbers n.
func (v *Verifier) Line() int { return v.line }

// start checks the options and the checkpoint's signature.
func (v *Verifier) start() error {
	o := v.opts
	if o.Checkpoint == nil {
		v.prev = o.Anchor
		return nil
	}
	if !o.Anchor.IsZero() {
		return fmt.Errorf("%w: an anchor and a checkpoint together", ErrCheckpoint)
	}
	sc := *o.Checkpoint
	switch {
	case o.GateKey != nil:
		if err := VerifyCheckpoint(o.GateKey, sc.Checkpoint, sc.Sig); err != nil {
			return err
		}
	case o.Keys != nil:
		if err := VerifySignedCheckpoint(o.Keys, sc, o.At); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: no gate key to check the checkpoint with", ErrCheckpoint)
	}
	if sc.Seq == 0 && !sc.Hash.IsZero() {
		return fmt.Errorf("%w: a checkpoint at seq 0 has a zero hash", ErrCheckpoint)
	}
	v.cp = &sc.Checkpoint
	return nil
}

// read parses the next line into l.rec.
func (l *lines) read(b []byte) error {
	l.line++
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%w: line %d is empty", ErrMalformed, l.line)
	}
	if l.fast = l.parseFast(b); l.fast {
		return nil
	}
	// What the fast parser does not take (escapes, arguments, other
	// spellings of the same JSON, and everything malformed) is read the
	// slow way: canon, the exact names, then encoding/json.
	l.rec = Record{}
	if err := readRecord(b, &l.rec); err != nil {
		return fmt.Errorf("%w: line %d: %w", ErrMalformed, l.line, err)
	}
	return nil
}

// readRecord reads a line the fast parser declined.
func readRecord(b []byte, r *Record) error {
	return readExact(b, MaxLine, recordShape, r, "an audit record")
}

// errNoRecords is the failure of an export without records against a
// checkpoint: it neither passes through the checkpoint nor continues it,
// as an export cut before the checkpoint does not.
func errNoRecords(seq uint64) error {
	return fmt.Errorf("%w: the export holds no records, so it neither passes through nor continues the checkpoint at seq %d", ErrCheckpoint, seq)
}

// check verifies v.rec, at index i of the stream, against what came
// before, as verifyChain and verifyFrom do.
func (v *Verifier) check(i int) error {
	r := &v.rec
	if i == 0 {
		if err := v.checkFirst(); err != nil {
			return err
		}
		v.sum.FirstSeq, v.sum.FirstPrev = r.Seq, r.PrevHash
	} else if r.Seq != v.sum.LastSeq+1 {
		return &ChainBreak{Index: i, Seq: r.Seq, Why: fmt.Sprintf("sequence jumps from %d", v.sum.LastSeq)}
	}
	if !r.PrevHash.Equal(v.prev) {
		return &ChainBreak{Index: i, Seq: r.Seq, Why: "prev_hash does not match the previous record"}
	}
	var h canon.Digest
	var err error
	if v.fast {
		h, err = r.hashValid()
	} else {
		h, err = r.ComputeHash()
	}
	if err != nil {
		return &ChainBreak{Index: i, Seq: r.Seq, Why: err.Error()}
	}
	if !h.Equal(r.Hash) {
		return &ChainBreak{Index: i, Seq: r.Seq, Why: "record hash does not match its content"}
	}
	if v.cp != nil && !v.passed && v.sum.FirstSeq == 1 && uint64(r.Seq) == v.cp.Seq {
		if !h.Equal(v.cp.Hash) {
			return &ChainBreak{Index: i, Seq: r.Seq, Why: "record hash is not the signed checkpoint's"}
		}
		v.passed = true
	}
	v.prev = h
	v.sum.Records++
	v.sum.LastSeq, v.sum.Head = r.Seq, h
	return nil
}

// checkFirst judges where the first record starts.
func (v *Verifier) checkFirst() error {
	first := &v.rec
	if v.cp == nil {
		if v.prev.IsZero() && first.Seq != 1 {
			return &ChainBreak{Index: 0, Seq: first.Seq,
				Why: "the chain does not start at the first record (verify it from an anchor or a signed checkpoint)"}
		}
		return nil
	}
	switch cp := v.cp; {
	case first.Seq >= 1 && uint64(first.Seq) == cp.Seq+1:
		if !first.PrevHash.Equal(cp.Hash) {
			return &ChainBreak{Index: 0, Seq: first.Seq, Why: "prev_hash is not the checkpoint's hash"}
		}
		v.prev = cp.Hash
		v.passed = true
	case first.Seq == 1:
		v.prev = canon.Digest{}
		v.passed = cp.Seq == 0
	default:
		return fmt.Errorf("%w: the first record (line %d) is seq %d, neither the first of the chain nor the one after the checkpoint at seq %d", ErrCheckpoint, v.line, first.Seq, cp.Seq)
	}
	return nil
}
