package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
)

// exportAudit writes the store's whole audit chain to file as JSON Lines,
// checks it end to end against the store's head, and prints the approval
// figures to watch for fatigue. A third party checks the same file with
// `verify audit FILE`.
func exportAudit(ctx context.Context, log store.AuditLog, file string, out io.Writer) error {
	records, err := log.AuditRange(ctx, time.Unix(0, 0), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return fmt.Errorf("read audit chain: %w", err)
	}
	head, err := log.AuditHead(ctx)
	if err != nil {
		return fmt.Errorf("read audit head: %w", err)
	}
	if err := receipt.VerifyChain(records, [32]byte{}); err != nil {
		return err
	}
	if n := len(records); n > 0 && (records[n-1].Seq != head.Seq || !records[n-1].Hash.Equal(head.Hash)) {
		return fmt.Errorf("%w: the export does not end at the store's head", receipt.ErrChainBroken)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := receipt.WriteChain(f, records); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	m := receipt.Metrics(records).Overall
	fmt.Fprintf(out, "audit chain: %d records written to %s, head %s\n", len(records), file, head.Hash)
	fmt.Fprintf(out, "approvals: %d requests, %d approved, %d denied, %d expired; approval rate %.0f%%, median decision %s\n",
		m.Requests, m.Approved, m.Denied, m.Expired, 100*m.ApprovalRate, m.MedianDecision.Round(time.Second))
	return nil
}
