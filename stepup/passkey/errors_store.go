package passkey

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/store"
)

// signCountErr words the credential store's refusal to advance a
// signature counter. A counter that did not increase (every backend
// refuses it with [store.ErrCounter]: a cloned authenticator, or two
// answers of one authenticator raced, the older landing last) is
// [ErrCounter] and nothing else, so that a runtime and the HTTP service
// see the clone signal, never a store failure; any other error is
// [ticketstore.Err]'s, a retryable [stepup.ErrStore].
func signCountErr(err error) error {
	if errors.Is(err, store.ErrCounter) {
		return fmt.Errorf("verify: %w", ErrCounter)
	}
	return ticketstore.Err("verify", err)
}

// transient reports whether err says nothing about the answer: the store
// failed, or the caller gave up. Such an answer is neither refused in the
// audit chain nor taken for a forgery; it may be submitted again.
func transient(err error) bool {
	return errors.Is(err, stepup.ErrStore) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}
