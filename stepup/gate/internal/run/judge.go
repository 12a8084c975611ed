package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Judges reports whether the model judge decides ticket a.
func (g *Gate) Judges(a store.Approval) bool {
	return g.core.Judging != nil && g.core.Judging.Classes[a.EffectClass] && a.Tool != plug.GrantTool
}

// modelEvidence is the evidence of a model's decision: the gate's MAC
// over the ticket and the model's name, and what the model was asked and
// answered, by hash.
type modelEvidence struct {
	MAC      string `json:"gate_mac"`
	Key      string `json:"gate_key,omitempty"`
	Model    string `json:"model"`
	Prompt   string `json:"prompt_sha256"`
	Response string `json:"response_sha256"`
}

// modelName is the approver name of a model: "model:" and its id when
// the id is a valid principal name, else a name derived from its hash.
func modelName(id string) string {
	name := canon.PrefixModel + strings.ToLower(id)
	if canon.CheckPrincipalID(name) == nil {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	return canon.PrefixModel + "id-" + hex.EncodeToString(sum[:8])
}

// Judge has the model judge decide parked ticket a, whose card is cd, and
// stores its decision with the decision's audit row in one transaction.
func (g *Gate) Judge(ctx context.Context, a store.Approval, cd *card.Card) (stepup.Ticket, error) {
	v := g.core.Judging.Judge.Decide(ctx, cd.Visible(), a.Rationale)
	who := modelName(v.ModelID)
	to, decision, verb := store.Denied, receipt.DecisionDenied, "denied"
	if v.Approve {
		to, decision, verb = store.Approved, receipt.DecisionApproved, "approved"
	}
	// The ticket, which the runtime and its model read, says who decided
	// and why; the audit row also names the prompt and answer hashes,
	// which are the record's, not an observation for the agent.
	said := verb + " by " + who
	if v.Reason != "" {
		said += ": " + v.Reason
	}
	said = bound(said)
	reason := bound(fmt.Sprintf("%s by %s (prompt sha256 %s, answer sha256 %s)", verb, who,
		hex.EncodeToString(v.PromptHash[:]), hex.EncodeToString(v.ResponseHash[:])))
	if v.Reason != "" {
		reason = bound(reason + ": " + v.Reason)
	}
	mac, kid := g.core.MAC(a, who)
	ev, _ := json.Marshal(modelEvidence{MAC: hex.EncodeToString(mac), Key: kid, Model: v.ModelID,
		Prompt: hex.EncodeToString(v.PromptHash[:]), Response: hex.EncodeToString(v.ResponseHash[:])})
	var (
		done store.Approval
		now  time.Time
	)
	wctx := context.WithoutCancel(ctx) // once decided, the decision is kept
	err := g.core.AtNow(wctx, func(at time.Time) (err error) {
		now = at
		done, err = g.core.St.Resolve(wctx, a.ID, store.Resolution{To: to, Approver: who, Reason: said,
			Evidence: ev, At: at}, g.core.Note(decision, reason, at))
		return err
	})
	if errors.Is(err, store.ErrResolved) || errors.Is(err, store.ErrExpired) {
		return g.core.Existing(wctx, a.ID) // decided or timed out meanwhile
	}
	if err != nil {
		return stepup.Ticket{}, core.TicketErr("model decision", err)
	}
	g.core.Changed()
	g.core.ObserveDecided(wctx, done, decision, verb+" by "+who, now)
	// A judge that misbehaved denied nothing of the agent's: its refusal
	// does not count towards the agent's lockout.
	if core.Misbehaviour(v.Err) == "" {
		if err := g.core.Decided(wctx, done, v.Approve); err != nil {
			return core.View(done, now), err
		}
	}
	t := core.View(done, now)
	t.Reason = said
	return t, nil
}

// bound cuts s to the store's field bound, on a rune boundary.
func bound(s string) string {
	if len(s) > store.MaxFieldSize {
		return strings.ToValidUTF8(s[:store.MaxFieldSize], "")
	}
	return s
}
