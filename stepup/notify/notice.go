package notify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"
)

// Notice tells approvers that a ticket waits for a person. It says what
// kind of call waits, for whom, until when, and where to decide it. It
// never carries the challenge, the arguments or anything else secret: the
// approval site shows the card to the approver after they sign in, so a
// Notice read by the wrong party discloses no more than that a ticket
// exists.
type Notice struct {
	// Ticket is the ticket's id. Ticket ids are unguessable, so the id
	// (and Link, which holds it) gives no power to decide.
	Ticket string `json:"ticket"`
	// Tool is the catalog name of the tool, e.g. "send_email".
	Tool string `json:"tool"`
	// Class is the tool's effect class: "read", "reversible", "external"
	// or "irreversible".
	Class string `json:"class"`
	// User is the user the call acts for.
	User string `json:"user"`
	// Approvers lists the people who may decide the ticket.
	Approvers []string `json:"approvers"`
	// ExpiresAt is when the ticket expires if nobody decides it.
	ExpiresAt time.Time `json:"expires_at"`
	// Link is the approval site's URL for the ticket: an absolute http or
	// https URL without user information.
	Link string `json:"link"`
}

// Notifier tells approvers that a ticket needs a person. The gate calls it
// after the ticket is stored; a failing Notifier never changes the
// gate's decision (the ticket stays pending and shows in the approvers'
// queue), so implementations should return quickly and deliver in the
// background, as [Webhook] does.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// Limits on a Notice, checked on both sides of the wire.
const (
	// MaxFieldBytes bounds each string field of a Notice.
	MaxFieldBytes = 2048
	// MaxApprovers bounds Notice.Approvers.
	MaxApprovers = 256
	// MaxBodyBytes bounds a delivery's body.
	MaxBodyBytes = 64 << 10
)

// ErrInvalidNotice means a Notice breaks one of the rules above: an empty
// ticket id or link, a link that is not an absolute http(s) URL or carries
// user information, an oversized or non-UTF-8 field, or too many
// approvers.
var ErrInvalidNotice = errors.New("notify: invalid notice")

// Validate reports whether n may be sent, with an error wrapping
// [ErrInvalidNotice] when it may not. Messages name the field, never its
// value.
func (n Notice) Validate() error {
	if n.Ticket == "" {
		return fmt.Errorf("%w: no ticket id", ErrInvalidNotice)
	}
	if n.Link == "" {
		return fmt.Errorf("%w: no link", ErrInvalidNotice)
	}
	if len(n.Approvers) > MaxApprovers {
		return fmt.Errorf("%w: more than %d approvers", ErrInvalidNotice, MaxApprovers)
	}
	fields := []struct{ name, v string }{
		{"ticket", n.Ticket}, {"tool", n.Tool}, {"class", n.Class}, {"user", n.User}, {"link", n.Link},
	}
	for _, a := range n.Approvers {
		fields = append(fields, struct{ name, v string }{"approvers", a})
	}
	for _, f := range fields {
		if len(f.v) > MaxFieldBytes {
			return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalidNotice, f.name, MaxFieldBytes)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s is not UTF-8", ErrInvalidNotice, f.name)
		}
	}
	u, err := url.Parse(n.Link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: link is not an absolute http(s) URL", ErrInvalidNotice)
	}
	if u.User != nil {
		return fmt.Errorf("%w: link carries user information", ErrInvalidNotice)
	}
	return nil
}

// wire is a delivery's body: the Notice's members and the delivery id,
// which the signature covers, so a replay guard keyed on it cannot be
// dodged by changing a header.
type wire struct {
	Delivery string `json:"delivery"`
	Notice
}
