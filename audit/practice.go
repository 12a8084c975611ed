package audit

import "strings"

// The rows of practice requests (gate.WithPractice): synthetic tickets
// the gate places in approvers' queues, built from a real request with
// one attack-class change, to measure whether approvers catch it.
const (
	// DecisionPracticeCaught is the row of a practice request its
	// approver denied: the change was caught.
	DecisionPracticeCaught = "practice_caught"
	// DecisionPracticeMissed is the row of a practice request its
	// approver approved: the change was missed. Nothing ran.
	DecisionPracticeMissed = "practice_missed"
)

// PracticeSession is the prefix of the session of every practice
// request; what follows it names the attack class of its change
// (PracticeLookalikeDomain, PracticeAmountTenfold). Real calls may not
// name a session with this prefix.
const PracticeSession = "asu:practice/"

// The attack classes of practice requests.
const (
	PracticeLookalikeDomain = "lookalike-domain" // a recipient's domain swapped for a look-alike
	PracticeAmountTenfold   = "amount-tenfold"   // an amount ten times larger
)

// PracticeClass returns the attack class of a practice request's
// session, and whether session is a practice request's.
func PracticeClass(session string) (string, bool) {
	return strings.CutPrefix(session, PracticeSession)
}
