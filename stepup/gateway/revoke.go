package gateway

import (
	"errors"
	"net/http"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
)

// decidedPage answers the link of a ticket that can no longer be decided:
// an approval that has not run yet can be revoked from here; any other
// ticket's page says what became of it. cause is the desk's refusal of
// the approval page.
func (s *Site) decidedPage(w http.ResponseWriter, r *http.Request, id stepup.TicketID, cause error) {
	p, err := s.desk.RevokePrompt(r.Context(), id)
	if err == nil && p.Ticket.Status.Runnable() {
		page := revokePage{Title: "Approved: " + p.Ticket.Tool, ID: string(id), Tool: p.Ticket.Tool,
			Digest: p.Ticket.Digest.String(), Status: string(p.Ticket.Status), Origin: s.rp.Origin,
			Expires: expiry(p.Ticket.ExpiresAt), Approvers: p.Approvers, RevokeOptions: string(p.DenyOptions)}
		page.Progress, page.Lapsed = s.standing(r.Context(), id)
		s.render(w, "revoke", page)
		return
	}
	t, terr := stepup.Ticket{}, errors.New("no ticket reader")
	switch {
	case errors.Is(cause, stepup.ErrExpired):
		// The desk timed it out, or found it timed out: a cancelled
		// ticket past its expiry reads as expired, as it is.
	case err == nil:
		t, terr = p.Ticket, nil // approved, but past its expiry
	case s.tickets != nil:
		t, terr = s.tickets.Ticket(r.Context(), id)
	}
	if terr != nil {
		s.refusedPage(w, cause)
		return
	}
	text, ok := verdict(t)
	if !ok {
		s.refusedPage(w, cause)
		return
	}
	status := http.StatusConflict
	if t.Status == stepup.StatusExpired || t.Status == stepup.StatusRevoked {
		status = http.StatusGone
	}
	s.log.Info("page refused", "ticket", id, "status", status, "ticket_status", t.Status)
	s.notice(w, status, "Already decided", text)
}

// revokeTicket revokes an approval that has not run yet, with the passkey
// of someone who may decide the ticket signing its deny challenge.
func (s *Site) revokeTicket(w http.ResponseWriter, r *http.Request) {
	id := stepup.TicketID(r.PathValue("id"))
	body, err := readAnswer(w, r)
	if err != nil {
		s.refuse(w, "revoke", id, err)
		return
	}
	var d denyJSON
	if _, err := decodeStrict(body, &d, []string{"credential", "reason"}); err != nil {
		s.refuse(w, "revoke", id, err)
		return
	}
	reason, err := cleanReason(d.Reason)
	if err != nil {
		s.refuse(w, "revoke", id, err)
		return
	}
	t, err := s.desk.Revoke(r.Context(), id, d.Credential, reason)
	if err != nil {
		s.refuse(w, "revoke", id, err)
		return
	}
	s.log.Info("revoked", "ticket", id, "status", t.Status)
	writeJSON(w, http.StatusOK, wire.FromTicket(t))
}
