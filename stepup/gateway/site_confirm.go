package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
	"github.com/agentstepup/asu/stepup/remote"
)

// Active confirmation on the approval site (gate.WithConfirmation): the
// page lists the options of gate.Desk.Confirmation above its buttons, and
// its approval posts the pick with the passkey answer to
//
//	POST /approve/{id}/picked  body: {"pick": a Choice's Pick, "credential": assertion}
//
// A wrong pick is refused (code wrong_pick) and the page shows the card
// again with its options unpicked; the right one approves.

// Codes of the refusals of an approval whose pick is missing or wrong.
const (
	// CodePickNeeded: the ticket's approver picks the effect's key value
	// before approving.
	CodePickNeeded = "pick_needed"
	// CodeWrongPick: the pick was not the card's key value.
	CodeWrongPick = "wrong_pick"
)

// maxPick bounds a posted pick: a pick is 32 hex digits.
const maxPick = 64

// pickJSON is an approval's body with its pick.
type pickJSON struct {
	Pick       string          `json:"pick"`
	Credential json.RawMessage `json:"credential"`
}

func (s *Site) approvePicked(w http.ResponseWriter, r *http.Request) {
	id := stepup.TicketID(r.PathValue("id"))
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "approve", id, err)
		return
	}
	var p pickJSON
	if _, err := decodeStrict(body, &p, []string{"pick", "credential"}); err != nil {
		s.refuse(w, "approve", id, err)
		return
	}
	if len(p.Pick) > maxPick {
		s.refuse(w, "approve", id, remote.ErrInvalid)
		return
	}
	t, err := s.desk.ApprovePicked(r.Context(), id, p.Pick, p.Credential)
	if err != nil {
		s.refuse(w, "approve", id, err)
		return
	}
	s.log.Info("approved", "ticket", id, "digest", digestOf(t), "status", t.Status)
	_, progress := s.progressOf(r.Context(), id)
	writeJSON(w, http.StatusOK, decidedJSON{Ticket: wire.FromTicket(t), Message: decided(t, progress), Progress: progress})
}
