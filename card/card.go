package card

import (
	"errors"
	"fmt"

	"github.com/agentstepup/asu/canon"
)

// Effect classes a catalog assigns to a tool, from harmless to final.
const (
	ClassRead         = "read"
	ClassReversible   = "reversible"
	ClassExternal     = "external"
	ClassIrreversible = "irreversible"
)

// Sentinel errors of [Render]; test for them with errors.Is.
var (
	// ErrUnrenderable means part of the effect cannot be shown faithfully
	// (a domain that fails IDNA conversion, say); the card is refused.
	ErrUnrenderable = errors.New("card: effect cannot be shown faithfully")
	// ErrBadContext means the trusted context is unusable: an unknown effect
	// class, a trusted domain that is not a domain or is a public suffix,
	// or a policy version that disagrees with the effect's.
	ErrBadContext = errors.New("card: invalid trusted context")
	// ErrBadEffect means the effect itself cannot be canonicalized.
	ErrBadEffect = errors.New("card: invalid effect")
)

// Context is what [Render] needs besides the effect. Every field but the
// last two is trusted: it comes from the integrator's catalog, policy and
// configuration, never from the agent. Rationale and ToolDescription are
// untrusted and only ever appear, escaped, in the card's region labelled as
// written by the agent.
type Context struct {
	// Title is the catalog's human name for the tool, e.g. "Send e-mail".
	Title string
	// Class is the catalog's effect class: one of ClassRead, ClassReversible,
	// ClassExternal, ClassIrreversible.
	Class string
	// PolicyVersion is the version of the policy that asked for approval.
	// When set it must equal the effect's policy_version.
	PolicyVersion string
	// Reasons are the policy's reasons for asking a person.
	Reasons []string
	// Approvers says who may approve the call, a line each, in the gate's
	// own words from the policy's route (trusted text), e.g. "user:dana,
	// the user it runs on behalf of". None shows nothing.
	Approvers []string
	// Provenance says what the agent read before proposing the call, e.g.
	// "read web page https://example.org/offer".
	Provenance []string
	// Hints are the catalog's presentation hints for this tool.
	Hints Hints
	// Trusted lists domains the integrator trusts (allowlists, recipients
	// approved before); none may be a public suffix. A value that is
	// exactly one address or URL at one of them, or under one, gets a
	// TRUSTED badge; domains on the card that look like one of them but
	// are not are flagged.
	Trusted []string

	// Rationale is UNTRUSTED: the agent's own explanation of the call.
	Rationale string
	// ToolDescription is UNTRUSTED: the tool's description as a possibly
	// untrusted tool server states it.
	ToolDescription string
}

// Hints tell [Render] how to lay out a tool's arguments. They change labels
// and order, never content: every argument is always shown, with its own
// name and its value quoted, whatever the hints say. Hints naming
// arguments the call does not have are ignored.
type Hints struct {
	// Labels maps a top-level argument name to a human label.
	Labels map[string]string
	// Order lists argument names to show first, in this order; the rest
	// follow in canonical (sorted) order.
	Order []string
	// Amount names the argument that is a sum of money.
	Amount string
	// Currency names the argument holding the amount's currency code.
	Currency string
	// FixedCurrency is the amount's currency when the tool has only one,
	// e.g. "EUR"; it is used when Currency is empty.
	FixedCurrency string
	// Recipient names the argument that says who receives the effect; it
	// is shown first and emphasised. (E-mail addresses and URLs in it are
	// analysed like those in any string; name it in Domains too when it
	// holds bare host names.)
	Recipient string
	// Units maps an argument name to the unit its number is in, e.g.
	// "seconds".
	Units map[string]string
	// Domains names arguments holding bare host names ("example.com",
	// "example.com:8443"), which are then analysed like the domains of
	// e-mail addresses and URLs, which are recognised in every string
	// anyway. A value of such an argument that is not a valid host name
	// refuses the card.
	Domains []string
}

// Card is a rendered approval card: a structured model built by [Render]
// from a canonical effect and trusted context, with its text, HTML and JSON
// views. A Card is immutable and safe for concurrent use.
type Card struct {
	m         model
	canonical []byte // JCS of the model, computed once by Render
	hash      canon.Digest
	// source is how many bytes the card was drawn from: the effect's
	// canonical form and the text of the context it shows. The views'
	// budgets are multiples of it.
	source int
}

// Hash returns the card hash the approval challenge commits to:
//
//	SHA-256("asu/v1/card" ‖ 0x00 ‖ JCS(card JSON))
//
// where the card JSON is what [Card.JSON] returns (already in JCS form, so
// JCS of it is itself). It is a function of those bytes alone: a verifier
// holding the card JSON recomputes it without this package.
func (c *Card) Hash() canon.Digest { return c.hash }

// JSON returns the card model in canonical (RFC 8785) JSON, for native
// apps and receipts. It includes "renderer": [RendererID].
func (c *Card) JSON() ([]byte, error) {
	if len(c.canonical) == 0 {
		return nil, fmt.Errorf("%w: card was not rendered", ErrUnrenderable)
	}
	out := make([]byte, len(c.canonical))
	copy(out, c.canonical)
	return out, nil
}

// The byte budget of each view, as a multiple of what the card was
// drawn from (the effect's canonical bytes and the context's text), plus
// room for a small card. The densest shapes measured reach about 46
// (HTML) and 14 (text) times their effect; values of nine short hosts
// each, every one with its own box of warnings, about 77 and 54. A view
// that would pass its budget stops where it passes it and shows that
// the card is too large to show, with no approval, rather than an
// unbounded page.
const (
	htmlPerSource = 96
	textPerSource = 64
	viewMinBytes  = 256 << 10
)

// viewBudget is the most bytes a view of c may take. A card that does
// not record what it was drawn from is budgeted from its card JSON,
// which is larger.
func viewBudget(c *Card, perSource int) int {
	source := c.source
	if source <= 0 {
		source = len(c.canonical)
	}
	return perSource*source + viewMinBytes
}

// contextBytes is the length of the text of ctx that a card shows.
func contextBytes(ctx Context) int {
	n := len(ctx.Title) + len(ctx.Rationale) + len(ctx.ToolDescription) + len(ctx.Hints.FixedCurrency)
	for _, list := range [][]string{ctx.Reasons, ctx.Approvers, ctx.Provenance} {
		for _, s := range list {
			n += len(s)
		}
	}
	for _, m := range []map[string]string{ctx.Hints.Labels, ctx.Hints.Units} {
		for _, s := range m {
			n += len(s)
		}
	}
	return n
}

// The views of a card past its budget.
const (
	tooLargeHTML = `<div class="asu-card asu-error">This approval card is too large to show. Do not approve.</div>`
	tooLargeText = "NO APPROVAL CARD: this card is too large to show. Do not approve.\n"
)
