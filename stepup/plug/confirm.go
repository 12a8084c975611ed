package plug

import (
	"fmt"

	"github.com/agentstepup/asu/stepup"
)

// The refusals of an approval whose approver must first pick the
// effect's key value (gate.WithConfirmation). Each wraps
// [stepup.ErrNotPermitted], so a caller that tells only that apart
// still does; the ticket is unchanged by either.
var (
	// ErrPickNeeded means the approval came without a pick: approve with
	// gate.Desk.ApprovePicked.
	ErrPickNeeded = fmt.Errorf("gate: pick the effect's key value before approving: %w", stepup.ErrNotPermitted)
	// ErrWrongPick means the pick is not the effect's key value: a
	// look-alike, a pick made for another ticket, or none of the options.
	ErrWrongPick = fmt.Errorf("gate: the pick is not the effect's key value: %w", stepup.ErrNotPermitted)
)
