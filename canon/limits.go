package canon

// The size limits of asu. Every bound on what a gate accepts, keeps, shows
// and exports is derived from these, here and nowhere else, so that what
// one layer accepts the next one keeps: the arguments a gate takes are
// arguments its store stores, its card shows and its audit chain exports.
// Anything larger is refused, at the first layer that sees it, with an
// error wrapping [ErrTooLarge].
const (
	// MaxArgs bounds a call's arguments, as sent and canonical.
	MaxArgs = DefaultMaxBytes
	// MaxEnvelope bounds what a sealed effect adds to its arguments: the
	// tool, the principal and its delegations, task and step, references,
	// policy version and audience.
	MaxEnvelope = 64 << 10
	// MaxEffect bounds a sealed effect's canonical bytes.
	MaxEffect = MaxArgs + MaxEnvelope
	// MaxCard bounds an approval card's canonical JSON. A card nests each
	// argument in a few objects of its own, so a card can be several times
	// its effect; this is what a receipt verifier accepts.
	MaxCard = 16 << 20
	// MaxText bounds every other free-text or opaque field a gate keeps:
	// an agent's rationale, a reason, an approver's evidence, a result.
	MaxText = 1 << 20
)
