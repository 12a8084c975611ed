package attackkit

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
)

// Adapter builds one fresh integration under test. The kit calls it at the
// start of every attack (some attacks call it once per generated case), so
// state never leaks from one attack to the next. Every tool the
// integration runs must run through tools, which records what ran; t is
// the running test, for t.TempDir and t.Cleanup.
//
// The kit proposes calls of two tools, which the integration must route
// to a person: send_email {to, subject, body} (external) and issue_refund
// {order, amount} (irreversible, amounts up to 500). The seed catalog of
// package stepuptest has both.
type Adapter func(t testing.TB, tools *Tools) Target

// Target is one integration under test: how its agent side proposes and
// runs calls, how its people answer, and the optional hooks through which
// an attacker who controls the agent's runtime state tampers with it. A
// nil hook means the framework offers no such path, and the attacks that
// need it are skipped with a one-line reason.
type Target struct {
	// Runtime proposes calls, waits for their decision and runs them: a
	// stepup.Runtime (the in-process gate, the remote client), or the
	// framework's own loop behind that interface, where Execute is the
	// framework's resume. Required.
	Runtime stepup.Runtime
	// People answers prompts as a person would. Required. It may also
	// implement [Viewer], [Revoker], [Granter], [Receipter] and
	// [Replayer]; the attacks that need a missing one are skipped.
	People Approver

	// Say writes text into the channel the agent shares with the person
	// about ticket id (the chat, the terminal): what a compromised agent
	// can always do.
	Say func(ctx context.Context, id stepup.TicketID, text string) error
	// Checkpoint edits the saved state the framework resumes ticket id
	// from (an interrupt's checkpoint).
	Checkpoint Tamper
	// Hook installs a pre-execution hook that rewrites ticket id's call
	// right before it runs.
	Hook Tamper
	// History edits the stored conversation history that holds ticket
	// id's tool call.
	History Tamper
	// Resubmit sends ticket id's tool call again with the call c, the way
	// the framework lets a caller resubmit a tool call after approval,
	// and runs whatever the framework then runs.
	Resubmit func(ctx context.Context, id stepup.TicketID, c stepup.Call) (stepup.Result, error)
	// Advance moves the integration's clock forward by d.
	Advance func(d time.Duration)
	// ChangePolicy changes the integration's policy to a new version, as
	// an operator deploying a new catalog would: an approval made under
	// the previous version must not run.
	ChangePolicy func(ctx context.Context) error
	// AgentView returns everything the integration has shown the agent
	// so far beyond what its Runtime returned (which the kit records
	// itself): the ticket reasons, wait answers, tool results and errors
	// the framework put in the agent's context, as text. The kit acts as
	// the agent on every link, token and id it finds there.
	AgentView func(ctx context.Context) ([]string, error)
	// HTTPClient is how the agent reaches the links it was shown
	// (default: a client of the kit's own with a short timeout).
	HTTPClient *http.Client

	// Limits are the flood bounds the integration promises; zero fields
	// take the kit's defaults.
	Limits Limits
}

// Tamper changes the state a framework keeps about ticket id's call with
// edit, the way the framework lets code that is not the approver do it.
type Tamper func(ctx context.Context, id stepup.TicketID, edit func(*stepup.Call)) error

// Approver is how a person answers a prompt. who is the person answering:
// the kit answers as [User], and as people who may not decide (the agent
// itself, [Stranger]) to see them refused. An error means the answer was
// not accepted.
type Approver interface {
	Approve(ctx context.Context, id stepup.TicketID, who string) error
	Deny(ctx context.Context, id stepup.TicketID, who string) error
}

// Viewer is an optional [Approver] capability: what the person is shown
// for ticket id.
type Viewer interface {
	View(ctx context.Context, id stepup.TicketID) (Card, error)
}

// Card is what an approver is shown, split into the text the integration
// presents as its own and the text it labels as written by the agent.
// Trusted must be exactly what the reader takes as the integration's
// statement of the action, without any digest fingerprint (a fingerprint
// distinguishes cards no person compares).
type Card struct {
	Trusted   string
	Untrusted string
}

// Revoker is an optional [Approver] capability: revoke the approval of
// ticket id before it runs, as person who.
type Revoker interface {
	Revoke(ctx context.Context, id stepup.TicketID, who string) error
}

// Granter is an optional [Approver] capability: person who issues a
// delegated approval g, good for uses calls during d, and the call's
// Grant field names the returned id.
type Granter interface {
	Grant(ctx context.Context, who string, g grant.Grant, uses int, d time.Duration) (string, error)
}

// Receipter is an optional [Approver] capability: the record of ticket
// id's approval, and what a third party needs to verify it offline.
type Receipter interface {
	Receipt(ctx context.Context, id stepup.TicketID) (Evidence, error)
}

// Evidence is an approval record and what verifies it: the approver's
// public key, obtained out of band, and the relying party.
type Evidence struct {
	Receipt *receipt.Receipt
	Key     *receipt.TrustedKey
	Policy  receipt.Policy
}

// Replayer is an optional [Approver] capability: present the answer the
// person gave for ticket from as the answer for ticket to, as an attacker
// who captured it would.
type Replayer interface {
	Replay(ctx context.Context, from, to stepup.TicketID) error
}

// Limits are the flood bounds the kit holds an integration to.
type Limits struct {
	// PendingPerSession bounds the prompts one session has waiting at
	// once (default 10).
	PendingPerSession int
	// PendingPerUser bounds the prompts waiting for one user across all
	// sessions (default 30).
	PendingPerUser int
	// LockoutAfter is how many denials in a row a session may collect
	// before its next request must not reach a person (default 5).
	LockoutAfter int
}

// Default flood bounds of [Limits].
const (
	DefaultPendingPerSession = 10
	DefaultPendingPerUser    = 30
	DefaultLockoutAfter      = 5
)

func (l Limits) withDefaults() Limits {
	if l.PendingPerSession <= 0 {
		l.PendingPerSession = DefaultPendingPerSession
	}
	if l.PendingPerUser <= 0 {
		l.PendingPerUser = DefaultPendingPerUser
	}
	if l.LockoutAfter <= 0 {
		l.LockoutAfter = DefaultLockoutAfter
	}
	return l
}
