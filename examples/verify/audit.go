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
	File     string            `json:"file"`
	Valid    bool              `json:"valid"`
	Reason   string            `json:"reason,omitempty"`
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

func runAudit(args []string, stdout io.Writer, now func() time.Time) (int, error) {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	anchorHex := fs.String("anchor", "", "hash of the record before the first one in FILE, to check the link")
	headHex := fs.String("head", "", "expected hash of the last record (the store's audit head)")
	withMetrics := fs.Bool("metrics", false, "print approval metrics of the records: per effect class and per approver, with rubber-stamp warnings")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	cpFile := fs.String("checkpoint", "", "a checkpoint the gate signed, to verify a chain that starts after it (or passes through it)")
	gateKeyFile := fs.String("gate-key", "", "the gate's ed25519 public key (PEM), or its public key ring (a -keys FILE.pub), that signs checkpoints")
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
	records, err := audit.ReadChain(f)
	if err == nil {
		rep.Records = len(records)
		if *cpFile != "" {
			if gateKeys != nil { // by the key the checkpoint names, while it is in force
				err = audit.VerifyChainFromKeys(records, gateKeys, sc, now())
			} else {
				err = audit.VerifyChainFrom(records, gateKey, sc.Checkpoint, sc.Sig)
			}
			rep.Checkpoint = &sc.Seq
		} else {
			err = audit.VerifyChain(records, anchor)
		}
	}
	if err == nil && len(records) > 0 {
		first, last := records[0], records[len(records)-1]
		rep.FirstSeq, rep.LastSeq, rep.Head = first.Seq, last.Seq, last.Hash.String()
		rep.Genesis = first.Seq == 1 && first.PrevHash.IsZero()
		if *headHex != "" && !last.Hash.Equal(head) {
			err = &audit.ChainBreak{Index: len(records) - 1, Seq: last.Seq, Why: "last record's hash is not the expected head (records removed or rewritten at the end)"}
		}
	}
	if err == nil && len(records) == 0 && *headHex != "" {
		err = fmt.Errorf("%w: no records, but a head was expected", audit.ErrChainBroken)
	}
	if err != nil {
		rep.Reason = err.Error()
		var b *audit.ChainBreak
		if errors.As(err, &b) {
			rep.Break = b
		}
	} else {
		rep.Valid = true
	}
	if *withMetrics && rep.Valid {
		m := figures.Compute(records)
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
		return "invalid: " + rep.Reason
	case rep.Records == 0:
		return "valid: no records"
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
// The signature is checked with the chain, by audit.VerifyChainFrom or
// audit.VerifyChainFromKeys.
func readCheckpoint(cpFile, keyFile string) (audit.SignedCheckpoint, ed25519.PublicKey, *keyring.PublicRing, error) {
	b, err := os.ReadFile(cpFile)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, fmt.Errorf("read checkpoint: %w", err)
	}
	sc, err := audit.ParseSignedCheckpoint(b)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return audit.SignedCheckpoint{}, nil, nil, fmt.Errorf("read gate key: %w", err)
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

// printMetrics prints the approval figures: overall and per effect class,
// then per approver, then the rubber-stamp warnings (or the rule none of
// them tripped).
func printMetrics(w io.Writer, m *figures.Report) {
	width := len("all")
	for n := range m.ByClass {
		width = max(width, len(n))
	}
	for n := range m.ByApprover {
		width = max(width, len(n))
	}
	dur := func(d time.Duration) string { return d.Round(time.Second).String() }
	flag := func(c figures.Class) string {
		if c.RubberStamp {
			return "  RUBBER-STAMP"
		}
		return ""
	}
	row := func(name string, c figures.Class) {
		fmt.Fprintf(w, "  %-*s  requests %4d  approved %4d  denied %4d  expired %4d  rate %5.1f%%  median %7s  p90 %7s  per reviewer-hour %5.1f  peak hour %3d%s\n",
			width, name, c.Requests, c.Approved, c.Denied, c.Expired, 100*c.ApprovalRate, dur(c.MedianDecision), dur(c.P90Decision),
			c.ApprovalsPerReviewerHour, c.PeakReviewerHour, flag(c))
	}
	fmt.Fprintln(w, "approval metrics (all, then by effect class):")
	row("all", m.Overall)
	for _, n := range slices.Sorted(maps.Keys(m.ByClass)) {
		row(n, m.ByClass[n])
	}
	if len(m.ByApprover) > 0 {
		fmt.Fprintln(w, "by approver:")
		for _, n := range slices.Sorted(maps.Keys(m.ByApprover)) {
			c := m.ByApprover[n]
			fmt.Fprintf(w, "  %-*s  approved %4d  denied %4d  rate %5.1f%%  median %7s  p90 %7s  per reviewer-hour %5.1f  peak hour %3d%s\n",
				width, n, c.Approved, c.Denied, 100*c.ApprovalRate, dur(c.MedianDecision), dur(c.P90Decision),
				c.ApprovalsPerReviewerHour, c.PeakReviewerHour, flag(c))
		}
	}
	if len(m.Warnings) == 0 {
		fmt.Fprintf(w, "no rubber-stamp warnings (rule: over %.1f%% approved, median under %s, at least %d decisions)\n",
			100*m.Rule.Rate, m.Rule.Median, m.Rule.MinDecisions)
		return
	}
	fmt.Fprintln(w, "warnings:")
	for _, warning := range m.Warnings {
		fmt.Fprintln(w, "  "+warning)
	}
}
