package exectoken

import (
	"context"
	"errors"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// transient reports whether err says nothing about a token or its
// ticket: the store failed, a plug-in of the gate misbehaved, or the
// caller gave up. Such a failure is not a refusal: it writes no audit
// row and abandons nothing, and the same call may be made again.
func transient(err error) bool {
	return errors.Is(err, stepup.ErrStore) || errors.Is(err, plug.ErrMisbehaved) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
