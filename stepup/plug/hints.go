package plug

// Hints tell the card renderer how to lay out a tool's arguments: a
// [Decision] carries them from the policy to the card. They change labels
// and order, never content: every argument is always shown, with its own
// name and its value quoted, whatever the hints say. Hints naming
// arguments the call does not have are ignored.
//
// Hints has the fields of card.Hints, in the same order, so the gate
// converts one to the other (card.Hints(h)); it is declared here so that a
// policy names its hints without linking the card renderer.
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
	// is shown first and emphasised.
	Recipient string
	// Units maps an argument name to the unit its number is in, e.g.
	// "seconds".
	Units map[string]string
	// Domains names arguments holding bare host names ("example.com"),
	// which the card analyses like the domains of e-mail addresses and
	// URLs. A value of such an argument that is not a valid host name
	// refuses the card.
	Domains []string
}
