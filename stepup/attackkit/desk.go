package attackkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// Desk is the [Approver] of an asu gate: each person answers through the
// gate's approver desk with a fake passkey of their own (package
// stepuptest), enrolled through an administrator's invite the first time
// they answer. A person the enrollment refuses (an agent, a reserved
// name) cannot answer. Desk also implements [Viewer], [Revoker],
// [Granter], [Receipter] and [Replayer]. It is safe for concurrent use.
//
// Desk serves an in-process gate and a gateway alike: the runtime may be
// remote while its approvers answer on the gate's desk.
type Desk struct {
	desk   *gate.Desk
	enroll *passkey.Enrollment
	rp     passkey.RelyingParty
	now    func() time.Time

	mu      sync.Mutex
	people  map[string]*stepuptest.Authenticator
	answers map[stepup.TicketID][]byte
}

// NewDesk returns the approvers of desk, enrolled through enrollment for
// relying party rp. now is the gate's clock (its store's), for the expiry
// of grants; nil means the wall clock. A ticket is shown only once one of
// its approvers holds a passkey: enroll [User] first ([Desk.Person]),
// unless the gate's harness already has (stepuptest.NewGate does).
func NewDesk(desk *gate.Desk, enrollment *passkey.Enrollment, rp passkey.RelyingParty, now func() time.Time) *Desk {
	if now == nil {
		now = time.Now
	}
	return &Desk{desk: desk, enroll: enrollment, rp: rp, now: now,
		people: map[string]*stepuptest.Authenticator{}, answers: map[stepup.TicketID][]byte{}}
}

var (
	_ Viewer    = (*Desk)(nil)
	_ Revoker   = (*Desk)(nil)
	_ Granter   = (*Desk)(nil)
	_ Receipter = (*Desk)(nil)
	_ Replayer  = (*Desk)(nil)
)

// Person returns who's fake passkey, enrolling it through an
// administrator's invite on first use: for approvers that answer through
// another front end than the desk, such as the gateway's approval site.
func (d *Desk) Person(ctx context.Context, who string) (*stepuptest.Authenticator, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.people[who]; ok {
		return a, nil
	}
	token, err := d.enroll.Invite(ctx, who)
	if err != nil {
		return nil, err
	}
	opts, err := d.enroll.BeginEnroll(ctx, token)
	if err != nil {
		return nil, err
	}
	a := stepuptest.NewAuthenticator(d.rp.ID, d.rp.Origin)
	reg, err := a.Register(opts)
	if err != nil {
		return nil, err
	}
	if _, err := d.enroll.FinishEnroll(ctx, token, reg); err != nil {
		return nil, err
	}
	d.people[who] = a
	return a, nil
}

// Approve signs ticket id's approval challenge with who's passkey.
func (d *Desk) Approve(ctx context.Context, id stepup.TicketID, who string) error {
	a, err := d.Person(ctx, who)
	if err != nil {
		return err
	}
	p, err := d.desk.Prompt(ctx, id)
	if err != nil {
		return err
	}
	answer, err := a.Assert(p.Options)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.answers[id] = answer
	d.mu.Unlock()
	_, err = d.desk.Approve(ctx, id, answer)
	return err
}

// Deny signs ticket id's deny challenge with who's passkey.
func (d *Desk) Deny(ctx context.Context, id stepup.TicketID, who string) error {
	answer, err := d.refusal(ctx, id, who, d.desk.Prompt)
	if err != nil {
		return err
	}
	_, err = d.desk.Deny(ctx, id, answer, "not what I asked for")
	return err
}

// refusal is who's passkey answer to the deny challenge of the prompt
// prompt returns for ticket id.
func (d *Desk) refusal(ctx context.Context, id stepup.TicketID, who string,
	prompt func(context.Context, stepup.TicketID) (gate.Prompt, error)) ([]byte, error) {
	a, err := d.Person(ctx, who)
	if err != nil {
		return nil, err
	}
	p, err := prompt(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.Assert(p.DenyOptions)
}

// Card headings of the region the gate's card labels as written by the
// agent.
const (
	agentRegion    = "▌ == WRITTEN BY THE AGENT: untrusted, not checked =="
	agentRegionEnd = "▌ == END OF AGENT TEXT =="
)

// View returns ticket id's card as the desk renders it, without its
// fingerprint, split at the region labelled as written by the agent.
func (d *Desk) View(ctx context.Context, id stepup.TicketID) (Card, error) {
	p, err := d.desk.Prompt(ctx, id)
	if err != nil {
		return Card{}, err
	}
	return splitCard(p.Card.Visible())
}

// errNoAgentRegion means a card has no region labelled as written by the
// agent where the kit expects one.
var errNoAgentRegion = errors.New("attackkit: the card has no region labelled as written by the agent")

// splitCard splits a card's text view at its first agent-region heading
// and the last end of it: anything between is the agent's, whatever lines
// the agent's text imitates.
func splitCard(text string) (Card, error) {
	start := lineIndex(text, agentRegion, false)
	end := lineIndex(text, agentRegionEnd, true)
	if start < 0 || end < start {
		return Card{}, errNoAgentRegion
	}
	return Card{Trusted: text[:start] + text[end:], Untrusted: text[start:end]}, nil
}

// lineIndex returns where the first (or last) line equal to line starts.
func lineIndex(text, line string, last bool) int {
	at := -1
	for off := 0; off < len(text); {
		l, _, _ := strings.Cut(text[off:], "\n")
		if l == line {
			at = off
			if !last {
				return at
			}
		}
		off += len(l) + 1
	}
	return at
}

// Revoke revokes approved ticket id with who's passkey.
func (d *Desk) Revoke(ctx context.Context, id stepup.TicketID, who string) error {
	answer, err := d.refusal(ctx, id, who, d.desk.RevokePrompt)
	if err != nil {
		return err
	}
	_, err = d.desk.Revoke(ctx, id, answer, "changed my mind")
	return err
}

// Grant asks who to issue g and approves it with who's passkey.
func (d *Desk) Grant(ctx context.Context, who string, g grant.Grant, uses int, dur time.Duration) (string, error) {
	tk, err := d.desk.Grant(ctx, who, gate.GrantSpec{Grant: g, Uses: uses, ExpiresAt: d.now().Add(dur)})
	if err != nil {
		return "", err
	}
	if err := d.Approve(ctx, tk.ID, who); err != nil {
		return "", err
	}
	return string(tk.ID), nil
}

// Receipt returns ticket id's receipt with the approver's public key as
// the kit's own authenticator holds it, never as the receipt carries it.
func (d *Desk) Receipt(ctx context.Context, id stepup.TicketID) (Evidence, error) {
	r, err := d.desk.Receipt(ctx, id)
	if err != nil {
		return Evidence{}, err
	}
	d.mu.Lock()
	a := d.people[r.Approver.User]
	d.mu.Unlock()
	if a == nil {
		return Evidence{}, fmt.Errorf("attackkit: no authenticator of the receipt's approver")
	}
	var cose []byte
	for _, cred := range a.CredentialIDs() {
		if bytes.Equal(cred, r.Approver.CredentialID) {
			cose = a.PublicKey(cred)
		}
	}
	key, err := receipt.ParseCOSEKey(cose)
	if err != nil {
		return Evidence{}, err
	}
	return Evidence{Receipt: r, Key: key, Policy: receipt.Policy{RPID: d.rp.ID, Origins: []string{d.rp.Origin}}}, nil
}

// Replay presents the last approval answer given for ticket from as the
// answer for ticket to.
func (d *Desk) Replay(ctx context.Context, from, to stepup.TicketID) error {
	d.mu.Lock()
	answer := d.answers[from]
	d.mu.Unlock()
	if answer == nil {
		return fmt.Errorf("attackkit: no answer was given for ticket %s", from)
	}
	_, err := d.desk.Approve(ctx, to, answer)
	return err
}
