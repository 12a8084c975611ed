package audit_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

func ExampleVerifyChain() {
	chain := audittest.Chain(10, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	fmt.Println(audit.VerifyChain(chain, canon.Digest{}))
	chain[6].Reason = "rewritten"
	fmt.Println(audit.VerifyChain(chain, canon.Digest{}))
	// Output:
	// <nil>
	// audit: chain broken at record 7 (seq 7): record hash does not match its content
}

func ExampleWriteChain() {
	chain := audittest.Chain(3, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	var buf bytes.Buffer
	if err := audit.WriteChain(&buf, chain); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Count(buf.String(), "\n"), "lines")
	// Output: 3 lines
}

func ExampleReadChain() {
	var buf bytes.Buffer
	_ = audit.WriteChain(&buf, audittest.Chain(5, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)))
	records, err := audit.ReadChain(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(records), audit.VerifyChain(records, canon.Digest{}))
	// Output: 5 <nil>
}

func ExampleRecord_ComputeHash() {
	r := audit.Record{Seq: 1, Tool: "send_email", Decision: audit.DecisionNeedsApproval}
	h, _ := r.ComputeHash()
	r.Hash = h
	fmt.Println(audit.VerifyChain([]audit.Record{r}, canon.Digest{}))
	// Output: <nil>
}
