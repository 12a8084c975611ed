package grant

// Coverage is the answer of [Covers]: whether a grant covers an effect, and
// if not, the first reason found and, for an argument, its path.
type Coverage struct {
	Covered bool
	// Reason is empty when Covered.
	Reason Reason
	// Path is the JSON pointer (RFC 6901) of the argument the Reason is
	// about, "" for the whole arguments or a reason about the call itself.
	Path string
}

// Reason says why a grant does not cover an effect. The texts are stable
// and never quote values.
type Reason string

// The reasons an effect is not covered.
const (
	ReasonDigest     Reason = "digest not granted"                // exact and plan grants
	ReasonTool       Reason = "tool differs"                      // template: tool
	ReasonAudience   Reason = "audience differs"                  // template: executor
	ReasonUser       Reason = "user differs"                      // the principal's user
	ReasonAgent      Reason = "agent differs"                     // template: pinned agent
	ReasonDelegated  Reason = "call made through delegations"     // template: principal chain
	ReasonReferences Reason = "call has references"               // template: resolved content
	ReasonUnpinned   Reason = "argument not pinned"               // an argument no rule covers
	ReasonMissing    Reason = "pinned argument missing"           // a rule whose argument is absent
	ReasonValue      Reason = "argument differs from the grant"   // equals, one_of
	ReasonBounds     Reason = "argument outside the grant bounds" // min/max, domains, max_bytes
	ReasonType       Reason = "argument of another type"          // a bound on the wrong JSON type
)

// pathReason reports whether r is about one argument.
func pathReason(r Reason) bool {
	switch r {
	case ReasonUnpinned, ReasonMissing, ReasonValue, ReasonBounds, ReasonType:
		return true
	}
	return false
}

func covered() Coverage { return Coverage{Covered: true} }

func notCovered(r Reason, path string) Coverage { return Coverage{Reason: r, Path: path} }
