package audit

// DecisionMisconfirmed is the row of an approval refused because its
// approver picked a look-alike of the effect's key value (the recipient's
// domain, the amount) instead of the card's own: the ticket is
// unchanged, and the card is shown again.
const DecisionMisconfirmed = "misconfirmed"
