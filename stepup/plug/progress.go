package plug

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup"
)

// Progress is where a ticket stands with its approvers: how many people
// it needs, who approved it (and when), who may still, and which
// approvals no longer count. Every approver's screen words it the same
// way ([Progress.Sentence]), from the gate's own reading of the ticket.
type Progress struct {
	// Needed is how many distinct people must approve the ticket (one
	// unless the policy names a quorum).
	Needed int
	// Signed are the approvals that count now, in the order given.
	Signed []Signature
	// Dropped are approvals given earlier that no longer count: their
	// approver left the group, lost or had revoked their passkey, or may
	// no longer decide the ticket.
	Dropped []Dropped
	// Group is the approver group the remaining approvals come from; ""
	// means the ticket's user decides it.
	Group string
	// Awaited lists who may still add an approval: those who may decide
	// the ticket and have not approved it yet. Empty once it is decided.
	Awaited []string
}

// Signature is one approval of a ticket that counts.
type Signature struct {
	Approver string
	At       time.Time
}

// Dropped is one approval that no longer counts, and why, in the gate's
// words.
type Dropped struct {
	Approver string
	At       time.Time
	Why      string
}

// Remaining is how many more approvals the ticket needs.
func (p Progress) Remaining() int { return max(p.Needed-len(p.Signed), 0) }

// SignedBy reports whether approver's approval counts.
func (p Progress) SignedBy(approver string) bool {
	for _, s := range p.Signed {
		if s.Approver == approver {
			return true
		}
	}
	return false
}

// Sentence words the progress for a person: "1 of 2 approved by
// user:dana; waiting for one more of finance" (waiting only while
// someone may still approve). A ticket one person decides and nobody
// approved yet reads "" (there is nothing to report).
func (p Progress) Sentence() string {
	var parts []string
	if len(p.Signed) > 0 {
		names := make([]string, len(p.Signed))
		for i, s := range p.Signed {
			names[i] = s.Approver
		}
		parts = append(parts, fmt.Sprintf("%d of %d approved by %s", len(p.Signed), p.Needed, strings.Join(names, ", ")))
	} else if p.Needed > 1 {
		parts = append(parts, fmt.Sprintf("0 of %d approved", p.Needed))
	}
	for _, d := range p.Dropped {
		parts = append(parts, fmt.Sprintf("the approval of %s no longer counts (%s)", d.Approver, d.Why))
	}
	if n := p.Remaining(); n > 0 && len(p.Awaited) > 0 && (p.Needed > 1 || len(p.Dropped) > 0) {
		from := "the ticket's user"
		if p.Group != "" {
			from = p.Group
		}
		parts = append(parts, fmt.Sprintf("waiting for %s of %s", count(n), from))
	}
	return strings.Join(parts, "; ")
}

// count words n approvals still needed.
func count(n int) string {
	switch n {
	case 1:
		return "one more"
	case 2:
		return "two more"
	case 3:
		return "three more"
	}
	return fmt.Sprintf("%d more", n)
}

// The refusals of an approval by someone whose passkey verified, each with
// its own code on the approval site, so the person is told what to do.
// Each wraps [stepup.ErrNotPermitted] (or [stepup.ErrRevoked]), so a
// caller that tells only those apart still does.
var (
	// ErrAlreadyApproved means the approver already approved a ticket that
	// needs several people; someone else must approve it now.
	ErrAlreadyApproved = fmt.Errorf("gate: already approved by this approver: %w", stepup.ErrNotPermitted)
	// ErrOwnRequest means the approver is the requester of the ticket (its
	// agent or a delegation of it): another person must approve it.
	ErrOwnRequest = fmt.Errorf("gate: the approver requested this call; another person must approve it: %w", stepup.ErrNotPermitted)
	// ErrNotYours means the approver is not among those who may decide
	// the ticket now.
	ErrNotYours = fmt.Errorf("gate: not an approver of this ticket: %w", stepup.ErrNotPermitted)
	// ErrPasskeyRevoked means the answer was signed by a passkey that has
	// been revoked.
	ErrPasskeyRevoked = fmt.Errorf("gate: the passkey was revoked: %w", stepup.ErrRevoked)
)
