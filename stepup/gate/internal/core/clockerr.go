package core

import "errors"

// clockErr is a failed read of the store's clock ([Gate.Now]): whatever
// the gate was about to do at that time was not asked of the store.
type clockErr struct{ error }

func (e clockErr) Unwrap() error { return e.error }

// ClockFailed reports whether err is a failed read of the store's clock,
// so that a call made with [Gate.AtNow] that failed this way asked the
// store nothing: its outcome is known, nothing changed.
func ClockFailed(err error) bool {
	var c clockErr
	return errors.As(err, &c)
}
