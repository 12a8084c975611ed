package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

// auditPage is how many records the export reads at a time.
const auditPage = 1000

// exportAudit writes the store's audit chain, from its first record to
// its head, to file as JSON Lines, checking every page's links as it
// goes, and prints the approval figures to watch for fatigue. With a
// checkpoint key, the gate first signs the head (gate.Admin.Checkpoint)
// and the export ends exactly there; the signed checkpoint is written to
// file + ".checkpoint.json", and a third party checks both with
//
//	go run ./examples/verify audit FILE --checkpoint FILE.checkpoint.json --gate-key KEY.pub
//
// Replicas may keep deciding meanwhile: the export ends at the head it
// read first, so it always verifies. Files are never overwritten. Time
// and memory are linear in the chain's length (the records are kept for
// the figures).
//
// With a key ring instead (keys, from -keys), the ring's current key signs
// and the checkpoint names it; the verifier reads the ring's public half.
func exportAudit(ctx context.Context, log store.AuditLog, admin *gate.Admin, key ed25519.PrivateKey, keys keyring.Source, file string, out io.Writer) error {
	var head audit.Checkpoint
	var signed *audit.SignedCheckpoint
	if key != nil || keys != nil {
		var sc audit.SignedCheckpoint
		var err error
		if key != nil {
			sc, err = admin.Checkpoint(ctx, key)
		} else {
			sc, err = admin.CheckpointWith(ctx, keys)
		}
		if err != nil {
			return err
		}
		head, signed = sc.Checkpoint, &sc
	} else {
		h, err := log.AuditHead(ctx)
		if err != nil {
			return fmt.Errorf("read audit head: %w", err)
		}
		head = audit.CheckpointOf(h)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	records, err := writeChain(ctx, log, head, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
		return err
	}
	if signed != nil {
		b, err := json.Marshal(signed)
		if err != nil {
			return err
		}
		cf, err := os.OpenFile(file+".checkpoint.json", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := cf.Write(append(b, '\n')); err != nil {
			cf.Close()
			return err
		}
		if err := cf.Close(); err != nil {
			return err
		}
	}
	m := figures.Compute(records).Overall
	fmt.Fprintf(out, "audit chain: %d records written to %s, head seq %d hash %s\n", len(records), file, head.Seq, head.Hash)
	if signed != nil {
		fmt.Fprintf(out, "signed checkpoint of the head: %s.checkpoint.json\n", file)
	}
	decided := "no decisions yet"
	if m.ApprovalRate != nil && m.Time != nil {
		decided = fmt.Sprintf("approval rate %.0f%%, median decision %s", 100**m.ApprovalRate, m.Time.Median().Round(time.Second))
	}
	fmt.Fprintf(out, "approvals: %d asked, %d approvals and %d denials by people, %d lapsed; %s\n",
		m.Asked, m.Approvals, m.Denials, m.Lapsed, decided)
	return nil
}

// writeChain writes the records 1 to head.Seq to w, page by page, each
// page checked to link to the one before, and the last to be head.
func writeChain(ctx context.Context, log store.AuditLog, head audit.Checkpoint, w io.Writer) ([]audit.Record, error) {
	var all []audit.Record
	var prev canon.Digest
	for from := uint64(1); from <= head.Seq; from += auditPage {
		to := min(from+auditPage, head.Seq+1)
		page, err := log.AuditSeq(ctx, from, to)
		if err != nil {
			return nil, fmt.Errorf("read audit chain: %w", err)
		}
		if uint64(len(page)) != to-from {
			return nil, fmt.Errorf("%w: records %d to %d are missing", audit.ErrChainBroken, from, to-1)
		}
		if err := audit.VerifyChain(page, prev); err != nil {
			return nil, err
		}
		if err := audit.WriteChain(w, page); err != nil {
			return nil, err
		}
		prev = page[len(page)-1].Hash
		all = append(all, page...)
	}
	if !prev.Equal(head.Hash) {
		return nil, fmt.Errorf("%w: the export does not end at the head", audit.ErrChainBroken)
	}
	return all, nil
}
