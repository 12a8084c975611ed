package plug_test

import (
	"context"
	"fmt"

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
			Class: "read"}, nil
	}
	return plug.Decision{Verdict: plug.NeedsApproval, Reason: "writes need the user", PolicyVersion: "v1",
		Class: "reversible"}, nil
}

// A policy implements plug.Policy without importing the gate; gate.New
// takes it as its Policy.
func Example_policy() {
	var p plug.Policy = readOnly{}
	d, _ := p.Decide(context.Background(), plug.Proposal{Tool: "mail"})
	fmt.Println(d.Verdict, "-", d.Reason)
	// Output: deny - unknown tool
}
