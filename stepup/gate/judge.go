package gate

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
	"github.com/agentstepup/asu/store"
)

// WithModelJudge has j decide, as soon as it is parked, every ticket of
// the effect classes named (default: card.ClassExternal alone; an
// irreversible class only when named). The model sees the ticket's card
// and, as untrusted data, the agent's rationale; it approves or denies
// with a reason. Its decision is recorded as a model's: the approver is
// "model:<name>" (a kind only the gate writes), the audit row's reason
// carries the model id and the SHA-256 of the exact prompt and answer, and
// the evidence is the gate's own MAC, so Execute runs a model's approval
// only if the gate made it. A model's approval has no passkey receipt.
// Grant tickets ([GrantTool]) are always left to their approver.
func WithModelJudge(j Judge, classes ...string) Option {
	return func(g *Gate) error {
		if j == nil {
			return fmt.Errorf("%w: nil model judge", stepup.ErrConfig)
		}
		if len(classes) == 0 {
			classes = []string{card.ClassExternal}
		}
		m := map[string]bool{}
		for _, c := range classes {
			switch c {
			case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
				m[c] = true
			default:
				return fmt.Errorf("%w: a model judge for unknown effect class %q", stepup.ErrConfig, c)
			}
		}
		g.judging = &judging{j: j, classes: m}
		return nil
	}
}

// judges reports whether the model judge decides ticket a.
func (g *Gate) judges(a store.Approval) bool {
	return g.judging != nil && g.judging.classes[a.EffectClass] && a.Tool != GrantTool
}

// modelEvidence is the evidence of a model's decision: the gate's MAC
// over the ticket and the model's name, and what the model was asked and
// answered, by hash.
type modelEvidence struct {
	MAC      string `json:"gate_mac"`
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

// judge has the model judge decide parked ticket a, whose card is cd, and
// stores its decision with the decision's audit row in one transaction.
func (g *Gate) judge(ctx context.Context, a store.Approval, cd *card.Card) (stepup.Ticket, error) {
	v := g.judging.j.Decide(ctx, cd.Visible(), a.Rationale)
	who := modelName(v.ModelID)
	to, decision, verb := store.Denied, receipt.DecisionDenied, "denied"
	if v.Approve {
		to, decision, verb = store.Approved, receipt.DecisionApproved, "approved"
	}
	reason := fmt.Sprintf("%s by %s (prompt sha256 %s, answer sha256 %s)", verb, who,
		hex.EncodeToString(v.PromptHash[:]), hex.EncodeToString(v.ResponseHash[:]))
	if v.Reason != "" {
		reason += ": " + v.Reason
	}
	if len(reason) > store.MaxFieldSize {
		reason = strings.ToValidUTF8(reason[:store.MaxFieldSize], "")
	}
	ev, _ := json.Marshal(modelEvidence{MAC: hex.EncodeToString(g.mac(a, who)), Model: v.ModelID,
		Prompt: hex.EncodeToString(v.PromptHash[:]), Response: hex.EncodeToString(v.ResponseHash[:])})
	var (
		done store.Approval
		now  time.Time
	)
	wctx := context.WithoutCancel(ctx) // once decided, the decision is kept
	err := g.atNow(wctx, func(at time.Time) (err error) {
		now = at
		done, err = g.st.Resolve(wctx, a.ID, store.Resolution{To: to, Approver: who, Reason: reason,
			Evidence: ev, At: at}, g.note(decision, reason, at))
		return err
	})
	if errors.Is(err, store.ErrResolved) || errors.Is(err, store.ErrExpired) {
		return g.existing(wctx, a.ID) // decided or timed out meanwhile
	}
	if err != nil {
		return stepup.Ticket{}, ticketErr("model decision", err)
	}
	g.changed()
	g.observeDecided(wctx, done, decision, verb+" by "+who, now)
	if err := g.decided(wctx, done, v.Approve); err != nil {
		return view(done, now), err
	}
	t := view(done, now)
	t.Reason = reason
	return t, nil
}
