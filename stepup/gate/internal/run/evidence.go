package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
)

// Transient reports whether err says nothing about a ticket or its
// evidence: the store failed ([stepup.ErrStore]) or the caller gave up.
// What failed that way changed nothing, writes no audit row, and may be
// asked again; it is never taken for a refusal, and never for forged
// evidence.
func Transient(err error) bool {
	return errors.Is(err, stepup.ErrStore) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}

// badEvidence is how an approver's Recheck error is reported: evidence
// that does not verify wraps [stepup.ErrBadAssertion]; a transient error
// (see [Transient]) is returned as it is, so that a credential read that
// failed once is a retryable store error, not a forgery; so is an
// approver's misbehaviour ([core.ErrMisbehaved]): the evidence was not
// checked, which is no sign that it was forged.
func badEvidence(err error) error {
	if err == nil || errors.Is(err, stepup.ErrBadAssertion) || Transient(err) || errors.Is(err, core.ErrMisbehaved) {
		return err
	}
	return fmt.Errorf("%w: %w", stepup.ErrBadAssertion, err)
}
