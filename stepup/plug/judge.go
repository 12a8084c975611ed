package plug

import (
	"context"

	"github.com/agentstepup/asu/canon"
)

// Judge decides tickets in place of a person: a language model shown only
// the trusted card, with the agent's own words as delimited data
// (package modelapprove). Its Decide never fails: a malformed, slow or
// failed answer is a denial.
type Judge interface {
	// Decide judges the call shown on card (the card's trusted text);
	// untrusted is the agent's own text about it.
	Decide(ctx context.Context, card, untrusted string) Judgment
}

// Judgment is a [Judge]'s decision with what the gate keeps for the
// record. It is the judge's own word, not a policy's [Verdict]: it only
// ever approves or denies a ticket the policy already sent for approval.
type Judgment struct {
	// Approve is true only when the model answered "approve" in time and
	// in the required form.
	Approve bool
	// Reason is the model's reason, on one line, or, when the judge
	// denied without the model's decision, one clause that says why in
	// words the runtime's model may read: never an error chain, a hash or
	// the model's raw answer.
	Reason string
	// ModelID names the model.
	ModelID string
	// PromptHash is the SHA-256 of the exact messages sent; zero when the
	// model was not asked.
	PromptHash canon.Digest
	// ResponseHash is the SHA-256 of the model's raw answer; zero when
	// there was none.
	ResponseHash canon.Digest
	// Err is nil when the model decided, and otherwise says why the
	// decision was forced to a denial.
	Err error
}
