package stepup

import "errors"

// ErrRolledBack means the gate's store went back behind what the gate
// had already seen (a restored backup, a lost write-ahead log, a failover
// to a standby that had not received the last commits, a clock stepped
// back): the gate refuses to decide or run anything until an operator has
// reviewed the store and reconciled it. Retrying does not help; the
// operator's reconcile does.
var ErrRolledBack = errors.New("stepup: the store went back behind the gate's mark")
