package plug_test

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/canon"
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

// parsedReadOnly is readOnly, which reads the arguments from Parsed
// alone, saying so: the gate then hands it Parsed without a copy of the
// arguments' text.
type parsedReadOnly struct{ readOnly }

func (p parsedReadOnly) DecideParsed(ctx context.Context, pr plug.Proposal) (plug.Decision, error) {
	return p.Decide(ctx, pr)
}

// A policy that reads only Proposal.Parsed implements plug.ParsedDecider;
// the gate calls DecideParsed with Args nil.
func ExampleParsedDecider() {
	args, _ := canon.Parse([]byte(`{"mode":"read","path":"q3.csv"}`))
	var p plug.Policy = parsedReadOnly{}
	if pd, ok := p.(plug.ParsedDecider); ok {
		d, _ := pd.DecideParsed(context.Background(), plug.Proposal{Tool: "files", Parsed: args})
		fmt.Println(d.Verdict, "-", d.Reason)
	}
	// Output: allow - reads are allowed
}
