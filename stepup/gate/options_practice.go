package gate

import (
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
)

// WithPractice makes the gate place a practice request in the queue of
// approver group group (the policy's Decision.Approvers; empty for a
// user's own queue) after every oneIn-th real request parked for it.
//
// A practice request is the real request with one attack-class change:
// a recipient's domain swapped for a look-alike (rn for m, 1 for l, 0 for
// o), or else an amount ten times larger. It goes through the policy like
// the real one and is parked, rendered and notified like a real ticket,
// under a session of its own (audit.PracticeSession and its class), which
// real calls may not name. The agent API, Wait, Ticket, Cancel and
// Execute answer its id as an unknown one ([stepup.ErrNotFound]).
//
// Its challenge carries a tag of its own, so that an approver's
// signature of it never verifies as a real approval, denial or receipt.
// Approving it never executes anything: it is resolved as denied with an
// audit.DecisionPracticeMissed row, and the ticket answered tells the
// approver it was practice and what gave it away; denying it is an
// audit.DecisionPracticeCaught row. A request that needs several
// approvers, or that a model judges, is never copied.
//
// The count is each gate process's own. A copy is made after the agent
// has its answer ([Gate.Settle]); a copy that is due is never skipped:
// under a burst, copies wait for one of a few background workers, and
// only past a bound on what waits (64 MiB of copies) is a copy made on
// the agent's path.
func WithPractice(group string, oneIn int) Option {
	return option(func(g *core.Config) error {
		if oneIn < 1 {
			return fmt.Errorf("%w: practice for group %q needs a rate of one in 1 or more, not %d", stepup.ErrConfig, group, oneIn)
		}
		if g.Practice == nil {
			g.Practice = map[string]*core.Practice{}
		}
		g.Practice[group] = &core.Practice{OneIn: oneIn}
		return nil
	})
}
