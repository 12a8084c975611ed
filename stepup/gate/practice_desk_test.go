package gate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// TestPracticeLooksRealOnTheDesk: through every filter the approver's
// Desk.List takes, a practice request is listed exactly when the real
// request it copies is, with the same fields but for its own id, digest
// and times; a filter by session, the one field it differs in, is
// refused, whatever session it names.
func TestPracticeLooksRealOnTheDesk(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, gate.WithPractice("", 1))
	real := proposeEmails(t, w, 1)
	practice := practiceIDs(t, w, real)
	require.Len(t, practice, 1)
	var realID stepup.TicketID
	for id := range real {
		realID = id
	}
	desk := w.Gate.Desk()
	for _, session := range []string{audit.PracticeSession + audit.PracticeLookalikeDomain,
		audit.PracticeSession + audit.PracticeAmountTenfold, audit.PracticeSession, "sess-0", "s"} {
		_, _, err := desk.List(ctx, stepuptest.Approver, store.Filter{Session: session})
		assert.ErrorIs(t, err, stepup.ErrConfig, "a filter by session %q", session)
	}
	for name, f := range map[string]store.Filter{
		"none":      {},
		"pending":   {States: []store.State{store.Pending}},
		"denied":    {States: []store.State{store.Denied}},
		"user":      {User: stepuptest.Approver},
		"other":     {User: "user:erin"},
		"group":     {Approvers: "nobody"},
		"one page":  {Limit: 1},
		"two pages": {Limit: 2},
	} {
		t.Run(name, func(t *testing.T) {
			var all []plug.Entry
			for {
				page, next, err := desk.List(ctx, stepuptest.Approver, f)
				require.NoError(t, err)
				all = append(all, page...)
				if next == "" {
					break
				}
				f.After = next
			}
			var gotReal, gotPractice *plug.Entry
			for i := range all {
				switch all[i].Ticket.ID {
				case realID:
					gotReal = &all[i]
				case practice[0]:
					gotPractice = &all[i]
				}
			}
			require.Equal(t, gotReal == nil, gotPractice == nil, "listed apart")
			if gotReal == nil {
				return
			}
			r, p := *gotReal, *gotPractice
			r.Ticket.ID, r.Ticket.Digest, r.Ticket.ExpiresAt, r.CreatedAt = "", p.Ticket.Digest, p.Ticket.ExpiresAt, p.CreatedAt
			p.Ticket.ID = ""
			assert.Equal(t, r, p)
		})
	}
}
