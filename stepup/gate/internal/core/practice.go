package core

import (
	"crypto/sha256"
	"sync/atomic"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// Practice is the rate of practice requests of one approver group
// (gate.WithPractice): one after every OneIn-th real request parked for
// it. The count is this process's own.
type Practice struct {
	OneIn int
	n     atomic.Uint64
}

// PracticeDue counts one real request parked for group and reports
// whether a practice request follows it.
func (g *Gate) PracticeDue(group string) bool {
	p := g.cfg.Practice[group]
	if p == nil || p.OneIn <= 0 {
		return false
	}
	return p.n.Add(1)%uint64(p.OneIn) == 0
}

// IsPractice reports whether ticket a is a practice request.
func IsPractice(a store.Approval) bool {
	_, ok := audit.PracticeClass(a.Session)
	return ok
}

// practiceTag separates the challenges of practice requests from every
// real approval's and denial's.
const practiceTag = "asu/v1/practice-challenge"

// PracticeChallenge is the challenge an approver signs about a practice
// request, derived from the one a real ticket with its columns would
// have: a signature over it never verifies as a real approval, denial or
// receipt.
func PracticeChallenge(c [32]byte) [32]byte {
	var buf [len(practiceTag) + 1 + 32]byte
	n := copy(buf[:], practiceTag)
	copy(buf[n+1:], c[:])
	return sha256.Sum256(buf[:])
}

// Tagged returns challenge, a challenge about ticket a, as the practice
// challenge of it when a is a practice request.
func Tagged(a store.Approval, challenge [32]byte) [32]byte {
	if IsPractice(a) {
		return PracticeChallenge(challenge)
	}
	return challenge
}
