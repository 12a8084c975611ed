package gateway

import (
	"context"
	"github.com/agentstepup/asu/stepup/plug"
	"strings"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
)

// decidedJSON is the answer to an approval or a denial: the ticket as it
// stands after the request, the sentence the page shows, worded from
// that status (Dana's first of two approvals is not told the action may
// run), and the ticket's approval progress.
type decidedJSON struct {
	wire.Ticket
	Message  string `json:"message"`
	Progress string `json:"progress,omitempty"`
}

// decided words what became of ticket t after an approval: approved and
// runnable, still waiting for more people (progress says who), or what
// else it became meanwhile.
// practiceReason begins the reason the gate gives a decided practice
// request (gate.WithPractice).
const practiceReason = "practice request "

func decided(t stepup.Ticket, progress string) string {
	if strings.HasPrefix(t.Reason, practiceReason) {
		// The gate's own words: what the approver decided, and what gave
		// the practice request away.
		return "This was a practice request, not a real one; nothing ran. " + t.Reason + "."
	}
	switch t.Status {
	case stepup.StatusApproved:
		return "Approved. The agent may now run exactly this action, once."
	case stepup.StatusPending:
		if progress == "" {
			return "Your approval is recorded; the request is still waiting for a decision."
		}
		return "Your approval is recorded, and the action cannot run yet: " + progress + "."
	}
	if text, ok := verdict(t); ok {
		return text
	}
	return "The request is now " + string(t.Status) + "."
}

// progressOf words ticket id's approval progress, or "" when there is
// nothing to say or it cannot be read.
func (s *Site) progressOf(ctx context.Context, id stepup.TicketID) (plug.Progress, string) {
	p, err := s.desk.Progress(ctx, id)
	if err != nil {
		return plug.Progress{}, ""
	}
	return p, p.Sentence()
}

// shownAnswerJSON answers a "card shown" post: the dwell time of the
// ticket's class and how long from now until an approval from this
// screen is acceptable. The page holds its approve button that long,
// counted from when it receives the answer, so it never enables earlier
// than the gate accepts. The answer is the same whether or not the card
// was shown before, so it tells nothing about other screens.
type shownAnswerJSON struct {
	Shown          bool  `json:"shown"`
	DwellMS        int64 `json:"dwell_ms"`
	AcceptableInMS int64 `json:"acceptable_in_ms"`
}

func shownAnswer(sh plug.Showing) shownAnswerJSON {
	return shownAnswerJSON{Shown: true, DwellMS: sh.Dwell.Milliseconds(),
		AcceptableInMS: max(sh.AcceptableAt.Sub(sh.Now).Milliseconds(), 0)}
}

// standing words the progress of approved ticket id and reports whether
// approvals it counted no longer do, so it will not run.
func (s *Site) standing(ctx context.Context, id stepup.TicketID) (string, bool) {
	p, text := s.progressOf(ctx, id)
	return text, text != "" && p.Remaining() > 0
}
