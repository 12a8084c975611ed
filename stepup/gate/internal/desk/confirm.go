package desk

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// What an approver confirms, by the card's summary: the first
// recipient's registrable domain, or else the amount.
const (
	keyDomain = "recipient domain"
	keyAmount = "amount"
)

// Confirmation is gate.Confirmation, field for field.
type Confirmation struct {
	Asks    string
	Choices []Choice
}

// Choice is gate.Choice, field for field.
type Choice struct {
	Text string
	Pick string
}

// The pick travels to Approve in the context, so that Approve stays one
// path: ApprovePicked sets it, nothing else can.
type pickKey struct{}

type picked struct{ pick string }

// Confirmation implements [gate.Desk.Confirmation].
func (d *Desk) Confirmation(ctx context.Context, id stepup.TicketID) (Confirmation, error) {
	a, _, _, err := d.pending(ctx, id, plug.ActionApprove)
	if err != nil {
		return Confirmation{}, err
	}
	c, _, err := d.confirmation(ctx, a)
	return c, err
}

// ApprovePicked implements [gate.Desk.ApprovePicked].
func (d *Desk) ApprovePicked(ctx context.Context, id stepup.TicketID, pick string, answer []byte) (stepup.Ticket, error) {
	return d.Approve(context.WithValue(ctx, pickKey{}, picked{pick}), id, answer)
}

// confirmation returns the options the approver of ticket a picks from
// and which of them is right; no choices when a's class is not confirmed
// or its card shows no key value. The options are a function of the
// ticket's id and nonce (secret, random, never shown to the agent) only,
// so every replica offers the same ones in the same order, and the
// right one's place differs from ticket to ticket.
func (d *Desk) confirmation(ctx context.Context, a store.Approval) (Confirmation, int, error) {
	if !d.g.core.Confirms(a.EffectClass) {
		return Confirmation{}, -1, nil
	}
	dec, s, err := d.g.core.Redecide(ctx, a)
	if err != nil {
		return Confirmation{}, -1, fmt.Errorf("confirmation: %w", err)
	}
	if !s.Digest().Equal(a.Digest) {
		return Confirmation{}, -1, fmt.Errorf("confirmation: %w", stepup.ErrEffectChanged)
	}
	cd, err := d.g.core.Render(s, dec, a.Taint, a.Rationale)
	if err != nil || !cd.Hash().Equal(a.CardHash) {
		return Confirmation{}, -1, fmt.Errorf("confirmation: %w: the card no longer renders as stored", stepup.ErrEffectChanged)
	}
	sum := cd.Summary()
	kind, value := "", ""
	switch {
	case len(sum.Recipients) > 0:
		kind, value = keyDomain, sum.Recipients[0].Domain
	case sum.Amount != "":
		kind, value = keyAmount, sum.Amount
	default:
		return Confirmation{}, -1, nil // nothing on the card to pick
	}
	if len(value) > maxKeyLen {
		value = value[:maxKeyLen]
	}
	seed := sha256.New()
	seed.Write([]byte("asu/v1/confirm\x00" + string(a.ID) + "\x00"))
	seed.Write(a.Nonce[:])
	var sd [32]byte
	seed.Sum(sd[:0])
	rng := rand.New(rand.NewChaCha8(sd))
	texts := lookalikes(kind, value, rng, confirmChoices-1)
	right := rng.IntN(confirmChoices)
	texts = append(texts[:right:right], append([]string{value}, texts[right:]...)...)
	c := Confirmation{Asks: kind, Choices: make([]Choice, len(texts))}
	for i, t := range texts {
		c.Choices[i] = Choice{Text: t, Pick: pickToken(a, t)}
	}
	return c, right, nil
}

// pickToken is what the page posts for option text of ticket a: a hash
// of the ticket's id, its secret nonce and the text, so that a pick made
// for another ticket, or guessed without the page, matches no option.
func pickToken(a store.Approval, text string) string {
	h := sha256.New()
	h.Write([]byte("asu/v1/confirm-pick\x00" + string(a.ID) + "\x00"))
	h.Write(a.Nonce[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(text)))
	h.Write(n[:])
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// confirmed checks the pick ctx carries (ApprovePicked) for approving
// ticket a with req, before the answer is verified: no answer approves a
// ticket of a confirmed class without the right pick. A pick of a wrong
// option is recorded as an audit
// row of its own kind (at most one per ticket and option, so at most
// three a ticket); the answer is verified only to name whose pick it was,
// never to approve. Picks that match no option leave no row: anyone may
// post them.
func (g *Gate) confirmed(ctx context.Context, d *Desk, a store.Approval, req plug.Request, answer []byte) error {
	c, right, err := d.confirmation(ctx, a)
	if err != nil || len(c.Choices) == 0 {
		return err
	}
	p, ok := ctx.Value(pickKey{}).(picked)
	if !ok || p.pick == "" {
		return fmt.Errorf("approve: %w: the approver picks the %s first", plug.ErrPickNeeded, c.Asks)
	}
	chosen := -1
	for i, ch := range c.Choices {
		if subtle.ConstantTimeCompare([]byte(p.pick), []byte(ch.Pick)) == 1 {
			chosen = i
		}
	}
	if chosen == right {
		return nil
	}
	refusal := fmt.Errorf("approve: %w: the %s picked is not the card's; read the card again", plug.ErrWrongPick, c.Asks)
	if chosen < 0 {
		return refusal
	}
	user := ""
	if v, err := g.core.Approver().Verify(ctx, req, answer); err == nil && core.MayDecide(v.User, a) == nil {
		user = v.User
		// A verified answer given with a look-alike picked never counts,
		// posted again with the right pick (see core.Gate.Refused).
		if err := g.core.Refused(context.WithoutCancel(ctx), a, answer); err != nil {
			return fmt.Errorf("%w; %w", refusal, err)
		}
	}
	if !g.core.FirstRefusal(a.ID, "pick", []byte(p.pick)) {
		return refusal
	}
	at, err := g.core.Now(context.WithoutCancel(ctx))
	if err != nil {
		return refusal
	}
	r := g.core.Record(a, audit.DecisionMisconfirmed,
		fmt.Sprintf("approve refused: a look-alike %s was picked (option %d of %d); the card is shown again", c.Asks, chosen+1, len(c.Choices)), at)
	r.Approver = user
	if _, err := g.core.St().AppendAudit(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("%w; %w: the wrong pick could not be recorded", refusal, stepup.ErrStore)
	}
	return refusal
}
