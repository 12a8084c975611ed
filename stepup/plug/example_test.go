package plug_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
)

// readOnly is a policy written against the contract alone: it allows
// reads of one tool, asks a person about everything else that tool does,
// and denies other tools.
type readOnly struct{}

func (readOnly) Decide(_ context.Context, p plug.Proposal) (plug.Decision, error) {
	if p.Tool != "files" {
		return plug.Decision{Verdict: plug.Deny, Reason: "unknown tool", PolicyVersion: "v1"}, nil
	}
	if mode, ok := p.Parsed.Get("mode"); ok && mode.String() == "read" {
		return plug.Decision{Verdict: plug.Allow, Reason: "reads are allowed", PolicyVersion: "v1",
			Class: card.ClassRead}, nil
	}
	return plug.Decision{Verdict: plug.NeedsApproval, Reason: "writes need the user", PolicyVersion: "v1",
		Class: card.ClassReversible}, nil
}

// A policy implements plug.Policy without importing the gate; gate.New
// takes it as its Policy.
func Example_policy() {
	var p plug.Policy = readOnly{}
	d, _ := p.Decide(context.Background(), plug.Proposal{Tool: "mail"})
	fmt.Println(d.Verdict, "-", d.Reason)
	// Output: deny - unknown tool
}

// NewRequest builds what an Approver is asked about; its challenge binds
// the ticket's digest, nonce, expiry and card hash.
func ExampleNewRequest() {
	var digest, cardHash [32]byte
	req := plug.NewRequest(plug.ActionApprove, "t-1", digest, [32]byte{1}, time.Unix(1700000000, 0), cardHash,
		[]string{"user:dana"})
	fmt.Println(req.Ticket, req.Action, req.Approvers)
	// Output: t-1 approve [user:dana]
}
