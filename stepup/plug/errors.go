package plug

import "errors"

// ErrMisbehaved is wrapped by the error of a call a plug-in failed by
// misbehaving (a panic, a hang past its deadline, an answer after its
// context ended) where the gate answers with an error rather than a
// denial: a prompt whose card the renderer could not draw, an answer the
// approver could not verify. The gate never takes such a call's answer.
var ErrMisbehaved = errors.New("gate: plug-in misbehaved")
