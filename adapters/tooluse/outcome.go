package tooluse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup"
)

// State is what became of a tool call.
type State int

// States of an [Outcome].
const (
	// Denied: the policy, the flood limits or a person refused the call,
	// or the gate could not decide it (then Err is set). It did not run.
	Denied State = iota
	// Runnable: the gate allows the call and it has not run yet
	// ([Gate.Propose] only).
	Runnable
	// Pending: the call waits for a person and has not run.
	Pending
	// Ran: the call ran now and Result holds its output.
	Ran
	// NotRun: the ticket expired, was cancelled or revoked, the policy or
	// the action changed, or no executor runs the tool. It did not run;
	// proposing it again is safe.
	NotRun
	// Spent: the approval was already used; the call ran or is running.
	// It must not run again.
	Spent
	// Failed: the call ran and the tool reported a failure. The approval
	// is spent.
	Failed
	// Unknown: the call may have run but its outcome was not recorded. Do
	// not retry it; the gate finishes it with the same idempotency key.
	Unknown
)

var stateNames = [...]string{"denied", "runnable", "pending", "ran", "not run", "spent", "failed", "unknown"}

// String returns the state's name.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Outcome is what became of one tool call.
type Outcome struct {
	// CallID is the model's id of the call; empty after [Gate.Resume],
	// the original call's after [Gate.ResumeDeferred].
	CallID string
	// Tool is the tool's name.
	Tool string
	// State says what happened to the call.
	State State
	// Ticket is the gate's ticket, as last seen; its ID is empty when the
	// gate refused to decide.
	Ticket stepup.Ticket
	// Result is the executor's result when State is [Ran].
	Result stepup.Result
	// Err is the error the Runtime returned, if any. It wraps one of
	// stepup's sentinels; its text is never shown to the model.
	Err error
	// Joined is set when the call was a retry of one still waiting, and
	// joined its ticket instead of proposing a new one. The outcome is
	// then that ticket's: still waiting, ran, failed, may have run, or
	// spent by the run of another call that joined it.
	Joined bool
}

// IsError reports whether the outcome is to be flagged as a failed tool
// call to the model (Anthropic's is_error): everything but [Ran],
// [Runnable] and [Pending].
func (o Outcome) IsError() bool {
	return o.State != Ran && o.State != Runnable && o.State != Pending
}

// Text is the tool result the model reads. For a call that ran it is the
// executor's output, a JSON string given as its text; otherwise one or two
// sentences that say the call did not run (or may have), why, and what the
// model may do next.
func (o Outcome) Text() string {
	switch o.State {
	case Ran:
		return output(o.Result.Output)
	case Runnable:
		return "Allowed, not run yet (ticket " + string(o.Ticket.ID) + ")."
	case Pending:
		s := "Not run: this call waits for a person's approval (ticket " + string(o.Ticket.ID) + "). " +
			"The approver is asked through a separate channel; nothing said in this conversation approves it."
		if !o.Ticket.ExpiresAt.IsZero() {
			s += " The request expires at " + o.Ticket.ExpiresAt.UTC().Format(time.RFC3339) + "."
		}
		return s
	case Denied:
		if o.Err != nil {
			return "Not run: the approval gate could not decide this call (" + class(o.Err) + "). Do not retry it unchanged."
		}
		s := "Not run: denied."
		if r := refusal(o.Ticket.Reason); r != "" {
			s = "Not run: " + r
			if !strings.HasSuffix(s, ".") {
				s += "."
			}
		}
		if d := o.Ticket.RetryAfter; d > 0 {
			s += " Retry after " + d.Round(time.Second).String() + " at the earliest."
		}
		return s
	case NotRun:
		why := string(o.Ticket.Status)
		if o.Err != nil {
			why = class(o.Err)
		}
		s := "Not run: the call did not run (" + why + ")."
		if r := oneLine(o.Ticket.Reason); r != "" && o.Err == nil {
			s = "Not run: the call did not run (" + why + ": " + r + ")."
		}
		if o.Ticket.Next != "" {
			s += " The gate proposed ticket " + string(o.Ticket.Next) + " instead."
		}
		return s + " It may be proposed again."
	case Spent:
		return "Not run again: this approval was already used; the call ran or is running. Do not propose it again."
	case Failed:
		return "The call ran and the tool reported a failure. The approval is spent; ask before trying again."
	case Unknown:
		return "The call may have run, but its outcome was not recorded. Do not retry it; it is finished with the same idempotency key."
	}
	return "Not run."
}

// output is an executor's output as text: a JSON string unquoted, any
// other JSON as written.
func output(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// sentinels are the errors a Runtime's refusals wrap, with what the model
// is told of each.
var sentinels = []struct {
	err  error
	text string
}{
	{stepup.ErrOutcomeUnknown, "outcome unknown"},
	{stepup.ErrExecutorFailed, "executor failed"},
	{stepup.ErrConsumed, "approval already used"},
	{stepup.ErrNotFound, "no such ticket"},
	{stepup.ErrNotApproved, "not approved"},
	{stepup.ErrExpired, "expired"},
	{stepup.ErrRevoked, "revoked"},
	{stepup.ErrPolicyChanged, "policy changed since the decision"},
	{stepup.ErrEffectChanged, "the action changed since it was approved"},
	{stepup.ErrNoExecutor, "no executor for the tool"},
	{stepup.ErrConfig, "gate misconfigured"},
	{stepup.ErrStore, "store failure"},
}

// class names the sentinel err wraps; never err's own text, which may be
// an executor's or a dependency's.
func class(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.text
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	return "gate error"
}

// auditMaterial is what a gate's reason may carry for the record and the
// model has no use for: the hashes of a model approver's prompt and
// answer.
var auditMaterial = regexp.MustCompile(`\s*\(prompt sha256 [0-9a-f]*, answer sha256 [0-9a-f]*\)`)

// refusal is a denial's reason as the clause after "Not run: ", on one
// line: "denied by user:dana: not what I asked for", never "denied:
// denied by ...", and without the audit record's hashes.
func refusal(reason string) string {
	r := oneLine(auditMaterial.ReplaceAllString(reason, ""))
	if r == "" {
		return ""
	}
	if l := strings.ToLower(r); !strings.HasPrefix(l, "denied") {
		r = "denied: " + r
	}
	return r
}

// oneLine folds a reason onto one line, so it cannot start a line of its
// own in the model's transcript.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Unscoped is the outcome of a call a wrapped tool refuses because its
// context carries no [Scope]: it did not run.
func Unscoped(r Request) Outcome {
	return Outcome{CallID: r.ID, Tool: r.Name, State: Denied,
		Ticket: stepup.Ticket{Status: stepup.StatusDenied, Reason: "the host gave this call no scope (user, session)"}}
}
