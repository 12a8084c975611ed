package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/keyring"
)

// auditReport is the --json output of `verify audit`.
type auditReport struct {
	File   string `json:"file"`
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
	// Line is the line of FILE the failure is about, from 1, when it is
	// about one; Seq is that record's seq, when it was read.
	Line     int               `json:"line,omitempty"`
	Seq      *int64            `json:"seq,omitempty"`
	Break    *audit.ChainBreak `json:"break,omitempty"`
	Records  int               `json:"records"`
	FirstSeq int64             `json:"first_seq,omitempty"`
	LastSeq  int64             `json:"last_seq,omitempty"`
	Genesis  bool              `json:"from_genesis"`
	// Checkpoint is the seq of the signed checkpoint the chain was
	// verified against, when one was given.
	Checkpoint *uint64         `json:"checkpoint,omitempty"`
	Head       string          `json:"head,omitempty"`
	Metrics    *figures.Report `json:"metrics,omitempty"`
}

// Progress lines of a long chain go to stderr every progressRows records,
// or every progressEvery if that comes first.
const (
	defaultProgressRows = 100_000
	progressEvery       = 5 * time.Second
)

func runAudit(args []string, stdout, stderr io.Writer, now func() time.Time) (int, error) {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	anchorHex := fs.String("anchor", "", "hash of the record before the first one in FILE, to check the link")
	headHex := fs.String("head", "", "expected hash of the last record (the store's audit head)")
	withMetrics := fs.Bool("metrics", false, "print the approval figures of the records: per effect class and per approver, with rubber-stamp warnings")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	cpFile := fs.String("checkpoint", "", "a checkpoint the gate signed, to verify a chain that starts after it (or passes through it)")
	gateKeyFile := fs.String("gate-key", "", "the gate's ed25519 public key (PEM), or its public key ring (a -keys FILE.pub), that signs checkpoints")
	progressRows := fs.Int("progress", defaultProgressRows, "on stderr, say how far the verification is every `N` records (and every 5 s); 0 for never")
	file, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if (*cpFile == "") != (*gateKeyFile == "") {
		return 0, fmt.Errorf("%w: --checkpoint and --gate-key go together", errUsage)
	}
	if *cpFile != "" && *anchorHex != "" {
		return 0, fmt.Errorf("%w: give --anchor or --checkpoint, not both", errUsage)
	}
	var sc audit.SignedCheckpoint
	var gateKey ed25519.PublicKey
	var gateKeys *keyring.PublicRing
	if *cpFile != "" {
		if sc, gateKey, gateKeys, err = readCheckpoint(*cpFile, *gateKeyFile); err != nil {
			return 0, err
		}
	}
	var anchor, head canon.Digest
	if *anchorHex != "" {
		if anchor, err = canon.ParseDigest(*anchorHex); err != nil {
			return 0, fmt.Errorf("%w: --anchor is not 64 hex characters", errUsage)
		}
	}
	if *headHex != "" {
		if head, err = canon.ParseDigest(*headHex); err != nil {
			return 0, fmt.Errorf("%w: --head is not 64 hex characters", errUsage)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("read audit chain: %w", err)
	}
	defer f.Close()

	rep := auditReport{File: file}
	opts := audit.VerifyOptions{Anchor: anchor}
	if *cpFile != "" {
		opts.Checkpoint = &sc
		if gateKeys != nil { // by the key the checkpoint names, while it is in force
			opts.Keys, opts.At = gateKeys, now()
		} else {
			opts.GateKey = gateKey
		}
		rep.Checkpoint = &sc.Seq
	}
	// The chain is read and verified as a stream: memory does not grow
	// with its length (the figures keep a few bytes per decision).
	v := audit.NewVerifier(f, opts)
	var tally figures.Tally
	started, last := time.Now(), time.Now()
	for r := range v.All() {
		if *withMetrics {
			tally.Add(r)
		}
		n := v.Summary().Records
		if *progressRows > 0 && (n%*progressRows == 0 || n%4096 == 0 && time.Since(last) >= progressEvery) {
			last = time.Now()
			fmt.Fprintf(stderr, "verify audit: %d records verified, at seq %d (%.0f a second)\n",
				n, r.Seq, float64(n)/max(time.Since(started).Seconds(), 1e-9))
		}
	}
	err = v.Err()
	sum := v.Summary()
	rep.Records = sum.Records
	if err == nil && sum.Records > 0 {
		rep.FirstSeq, rep.LastSeq, rep.Head = sum.FirstSeq, sum.LastSeq, sum.Head.String()
		rep.Genesis = sum.Genesis()
		if *headHex != "" && !sum.Head.Equal(head) {
			err = &audit.ChainBreak{Index: sum.Records - 1, Seq: sum.LastSeq, Why: "last record's hash is not the expected head (records removed or rewritten at the end)"}
		}
	}
	if err == nil && sum.Records == 0 && *headHex != "" {
		err = fmt.Errorf("%w: no records, but a head was expected", audit.ErrChainBroken)
	}
	if err != nil {
		rep.Reason, rep.Line = err.Error(), v.Line()
		var b *audit.ChainBreak
		switch {
		case errors.As(err, &b):
			// Record n of the export is its line n.
			rep.Break, rep.Line, rep.Seq = b, b.Index+1, &b.Seq
			rep.Reason = fmt.Sprintf("%v at line %d (seq %d): %s", audit.ErrChainBroken, rep.Line, b.Seq, b.Why)
		case rep.Line > 0 && rep.Line == sum.Records:
			rep.Seq = &sum.LastSeq // the chain ends too soon, at its last record
		}
	} else {
		rep.Valid = true
	}
	if *withMetrics && rep.Valid {
		m := tally.Report(figures.DefaultRubberStampRule())
		rep.Metrics = &m
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 0, err
		}
	} else {
		fmt.Fprintln(stdout, auditLine(rep, *anchorHex != ""))
		if rep.Metrics != nil {
			printMetrics(stdout, rep.Metrics)
		}
	}
	if !rep.Valid {
		return exitInvalid, nil
	}
	return exitValid, nil
}

func auditLine(rep auditReport, anchored bool) string {
	switch {
	case !rep.Valid:
		return "invalid: " + printable(rep.File) + ": " + printable(rep.Reason)
	case rep.Records == 0 && anchored:
		return "valid: no records after the anchor (the file is empty)"
	case rep.Records == 0:
		return "valid: no records (the file is empty: nothing to verify; --head or --checkpoint would refuse it)"
	case rep.Genesis && rep.Checkpoint != nil:
		return fmt.Sprintf("valid: %d records, seq %d-%d from the start of the chain, through the signed checkpoint at seq %d; head %s",
			rep.Records, rep.FirstSeq, rep.LastSeq, *rep.Checkpoint, rep.Head)
	case rep.Genesis:
		return fmt.Sprintf("valid: %d records, seq %d-%d from the start of the chain; head %s", rep.Records, rep.FirstSeq, rep.LastSeq, rep.Head)
	case rep.Checkpoint != nil:
		return fmt.Sprintf("valid: %d records, seq %d-%d continuing the signed checkpoint at seq %d; head %s",
			rep.Records, rep.FirstSeq, rep.LastSeq, *rep.Checkpoint, rep.Head)
	case anchored:
		return fmt.Sprintf("valid: %d records, seq %d-%d linked to the anchor; head %s", rep.Records, rep.FirstSeq, rep.LastSeq, rep.Head)
	}
	// VerifyChain refuses a chain that does not start at the first record
	// without an anchor or a checkpoint.
	return "invalid: not verified from the start of the chain"
}

// readCheckpoint reads a signed checkpoint file and the gate's key file:
// a PEM public key, or a public key ring (the gateway's -keys FILE.pub).
// The signature is checked by the chain's verifier before it reads a
// record.
func readCheckpoint(cpFile, keyFile string) (audit.SignedCheckpoint, ed25519.PublicKey, *keyring.PublicRing, error) {
	b, err := readFile(cpFile, "checkpoint", maxCheckpointFile)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, err
	}
	sc, err := audit.ParseSignedCheckpoint(b)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, err
	}
	kb, err := readFile(keyFile, "gate key", maxKeyFile)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, err
	}
	if !bytes.HasPrefix(bytes.TrimSpace(kb), []byte("-----BEGIN")) {
		ring, err := keyring.ParsePublic(keyFile, kb)
		if err != nil {
			return audit.SignedCheckpoint{}, nil, nil, fmt.Errorf("read gate key: %w", err)
		}
		return sc, nil, ring, nil
	}
	pub, err := parseGateKey(kb)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, err
	}
	return sc, pub, nil, nil
}

// printMetrics prints the approval figures: the window and the busiest
// hour, overall and per effect class, then per approver, then the
// rubber-stamp warnings (or the rule none of them tripped). A figure with
// nothing to measure reads "-": no decisions yet, or no active time.
// Class and approver names come from the records, and are printed with
// their controls escaped.
func printMetrics(w io.Writer, m *figures.Report) {
	width := len("all")
	for n := range m.ByClass {
		width = max(width, len(printable(n)))
	}
	for n := range m.ByApprover {
		width = max(width, len(printable(n)))
	}
	at := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
	if m.Window != nil {
		fmt.Fprintf(w, "window: %d records from %s to %s\n", m.Window.Records, at(m.Window.From), at(m.Window.To))
	}
	if m.PeakHour != nil {
		fmt.Fprintf(w, "busiest hour: %d approvals from %s\n", m.PeakHour.Approvals, at(m.PeakHour.Start))
	}
	decided := func(d figures.Decisions, p figures.Pace) string {
		rate, median, p90 := "     -", "      -", "      -"
		if d.ApprovalRate != nil {
			rate = fmt.Sprintf("%5.1f%%", 100**d.ApprovalRate)
		}
		if d.Time != nil {
			median = fmt.Sprintf("%7s", d.Time.Median().Round(time.Second))
			p90 = fmt.Sprintf("%7s", d.Time.P90().Round(time.Second))
		}
		pace := "    -"
		if p.ApprovalsPerActiveHour != nil {
			pace = fmt.Sprintf("%5.1f", *p.ApprovalsPerActiveHour)
		}
		flag := ""
		if d.RubberStamp {
			flag = "  RUBBER-STAMP"
		}
		return fmt.Sprintf("approvals %4d  denials %4d  rate %s  median %s  p90 %s  active %8s  per active hour %s  peak hour %3d%s",
			d.Approvals, d.Denials, rate, median, p90, (time.Duration(p.ActiveMillis) * time.Millisecond).Round(time.Second), pace, p.PeakHour, flag)
	}
	fmt.Fprintln(w, "approval figures (all, then by effect class; asked: calls put to a person, lapsed: expired or cancelled undecided):")
	row := func(name string, c figures.Class) {
		fmt.Fprintf(w, "  %-*s  asked %4d  lapsed %4d  %s\n", width, printable(name), c.Asked, c.Lapsed, decided(c.Decisions, c.Pace))
	}
	row("all", m.Overall)
	for _, n := range slices.Sorted(maps.Keys(m.ByClass)) {
		row(n, m.ByClass[n])
	}
	if len(m.ByApprover) > 0 {
		fmt.Fprintln(w, "by approver (each person's own decisions):")
		for _, n := range slices.Sorted(maps.Keys(m.ByApprover)) {
			a := m.ByApprover[n]
			fmt.Fprintf(w, "  %-*s  %s\n", width, printable(n), decided(a.Decisions, a.Pace))
		}
	}
	if len(m.Warnings) == 0 {
		fmt.Fprintf(w, "no rubber-stamp warnings (rule: over %.1f%% approved, median under %s, at least %d decisions)\n",
			100*m.Rule.Rate, m.Rule.Median, m.Rule.MinDecisions)
		return
	}
	fmt.Fprintln(w, "warnings:")
	for _, warning := range m.Warnings {
		fmt.Fprintln(w, "  "+printable(warning))
	}
}
