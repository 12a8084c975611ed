// Package card renders what an approver sees: a structured card built by
// trusted code from a canonical effect ([canon.Effect]) and trusted context
// ([Context]), with plain-text, HTML and JSON views, and the card hash that
// the approval challenge commits to.
//
// A passkey signs the challenge but does not display it, so what a person
// approves is whatever the card shows. The card is therefore built from the
// effect only, never from a summary the agent wrote, and two effects with
// different digests never render to the same visible text.
package card
