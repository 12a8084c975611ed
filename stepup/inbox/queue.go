package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
)

// entryJSON is one ticket of a queue as the page shows it.
type entryJSON struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// User is who the call runs on behalf of; Agent proposed it; Group
	// is the approver group the policy routed it to, if any.
	User  string `json:"user"`
	Agent string `json:"agent"`
	Group string `json:"group,omitempty"`
	// ExpiresAt bounds the decision; the page counts down to it.
	ExpiresAt time.Time `json:"expires_at"`
	// Approvers may decide the ticket; Others are those of them who are
	// not the viewer.
	Approvers []string `json:"approvers"`
	Others    []string `json:"others"`
	// Card is the approval card's HTML, rendered by the gate's code from
	// the stored effect (package card escapes every value).
	Card string `json:"card"`
	// Approve and Deny are the request options the passkey signs: the
	// ticket's own challenge and its deny challenge.
	Approve json.RawMessage `json:"approve"`
	Deny    json.RawMessage `json:"deny"`
	// Link is the ticket's page on the approval site, where Approve and
	// Deny are posted.
	Link string `json:"link"`
	// Line is what the ticket's one line in the queue shows; Progress is
	// who approved it so far and who is awaited, read afresh at each poll.
	Line     lineJSON     `json:"line"`
	Progress progressJSON `json:"progress"`
}

// queueJSON is an approver's queue, soonest expiry first.
type queueJSON struct {
	User             string      `json:"user"`
	SessionExpiresAt time.Time   `json:"session_expires_at"`
	Now              time.Time   `json:"now"`
	Entries          []entryJSON `json:"entries"`
}

// prompts caches what a stream has shown of each ticket it lists: a
// ticket's card, approvers and challenges do not change while it is
// pending. A nil entry marks a ticket that cannot be shown (decided or
// changed since it was listed).
type prompts map[string]*entryJSON

// list reads user's queue and what to show of each ticket, using and
// filling cache (nil: no cache).
func (in *Inbox) list(ctx context.Context, user string, cache prompts) ([]entryJSON, error) {
	queue, err := in.desk.Queue(ctx, user, in.limit)
	if err != nil {
		return nil, err
	}
	out := make([]entryJSON, 0, len(queue))
	listed := make(map[string]bool, len(queue))
	for _, e := range queue {
		id := string(e.Ticket.ID)
		listed[id] = true
		shown, cached := cache[id]
		if !cached {
			p, err := in.desk.Prompt(ctx, e.Ticket.ID)
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case err == nil:
				v := in.entry(e, p, user)
				shown = &v
			case !lasting(err):
				continue // a store failure, say: try again at the next poll
			}
			if cache != nil {
				cache[id] = shown
			}
		}
		if shown != nil {
			v := *shown // the progress moves while the rest stays: read at every poll
			v.Progress = progressOf(e.Progress)
			v.Others = others(e.Progress.Awaited, user)
			out = append(out, v)
		}
	}
	for id := range cache {
		if !listed[id] {
			delete(cache, id)
		}
	}
	return out, nil
}

// lasting reports whether a prompt's refusal will not change while the
// ticket stays listed.
func lasting(err error) bool {
	for _, e := range []error{stepup.ErrResolved, stepup.ErrExpired, stepup.ErrEffectChanged,
		stepup.ErrNotPermitted, stepup.ErrNotFound, stepup.ErrPolicyChanged} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (in *Inbox) entry(e plug.Entry, p gate.Prompt, viewer string) entryJSON {
	v := entryJSON{ID: string(e.Ticket.ID), Tool: e.Ticket.Tool, User: e.User, Agent: e.Agent, Group: e.Approvers,
		ExpiresAt: e.Ticket.ExpiresAt.UTC(), Approvers: p.Approvers, Others: others(p.Progress.Awaited, viewer),
		Approve: p.Options, Deny: p.DenyOptions, Link: in.approve + url.PathEscape(string(e.Ticket.ID)),
		Line: lineOf(p.Card, p.CardJSON), Progress: progressOf(p.Progress)}
	if p.Card != nil {
		v.Card = string(p.Card.HTML())
	}
	return v
}

func (in *Inbox) queue(w http.ResponseWriter, r *http.Request) {
	s, err := in.current(r)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	entries, err := in.list(r.Context(), s.user, nil)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, queueJSON{User: s.user, SessionExpiresAt: s.expires, Now: in.now(), Entries: entries})
}
