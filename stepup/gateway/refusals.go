package gateway

import (
	"github.com/agentstepup/asu/stepup/plug"
	"net/http"

	"github.com/agentstepup/asu/stepup/remote"
)

// Codes of the approval site's refusals of an answer that verified but
// may not approve, each with its own words so the approver knows what to
// do next. They come only from the desk, never from the agent API.
const (
	// CodeAlreadyApproved: the approver already approved this ticket,
	// which needs another person now.
	CodeAlreadyApproved = "already_approved"
	// CodeNeedsAnother: the approver requested the call; another person
	// must approve it.
	CodeNeedsAnother = "needs_another_person"
	// CodeNotYours: the approver may not decide this ticket.
	CodeNotYours = "not_yours"
	// CodePasskeyRevoked: the answer's passkey was revoked.
	CodePasskeyRevoked = "passkey_revoked"
	// CodeSecondPerson: the approver's catch rate of practice requests is
	// below the floor; another person must approve this class for now.
	CodeSecondPerson = "needs_second_person"
)

// decideCodes are the rows of the error table of the desk's refusals,
// ahead of the site's: each wraps a broader sentinel (not permitted,
// revoked) whose code goes in Also.
var decideCodes = []remote.Code{
	{Err: plug.ErrAlreadyApproved, Code: CodeAlreadyApproved, Status: http.StatusConflict, Detail: true},
	{Err: plug.ErrOwnRequest, Code: CodeNeedsAnother, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrNotYours, Code: CodeNotYours, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrPasskeyRevoked, Code: CodePasskeyRevoked, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrSecondPersonNeeded, Code: CodeSecondPerson, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrPickNeeded, Code: CodePickNeeded, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrWrongPick, Code: CodeWrongPick, Status: http.StatusForbidden, Detail: true},
}

// decideWords are the words of those refusals.
var decideWords = map[string]string{
	CodeAlreadyApproved: "You already approved this request. It needs another person's approval now: the page says who is awaited.",
	CodeNeedsAnother:    "You asked for this action (it is your agent's call), so someone else must approve it.",
	CodeNotYours:        "Your passkey may not decide this request: the page says who may.",
	CodePasskeyRevoked:  "This passkey was revoked and decides nothing. Ask the administrator to enroll a new one.",
	CodeSecondPerson:    "Nothing was approved: you let through too many recent practice requests, so another person of your group must approve calls of this kind for now. You can still deny it, and catching practice requests brings this back.",
	CodePickNeeded:      "Pick the value the card shows, above the buttons, before approving.",
	CodeWrongPick:       "That is not what the card shows. Nothing was approved: read the card again and pick again.",
}
