package core

import (
	"crypto/sha256"
	"sync"
)

// maxRefusals bounds the refused answers a gate remembers.
const maxRefusals = 4096

// refusals remembers the refused answers this gate recorded, oldest
// forgotten first, so that a copy of one, posted again, leaves no second
// row: an answer is recorded once per ticket and action, however often it
// is replayed.
type refusals struct {
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]struct{}
	order [][sha256.Size]byte
}

// FirstRefusal reports whether the refused answer about ticket id for
// action is new to this gate, and remembers it.
func (g *Gate) FirstRefusal(id, action string, answer []byte) bool {
	// Keyed as the marks are (answer_key.go), so a respelled copy of an
	// answer is the same refusal and leaves no row of its own.
	key := answerKey("asu/refusal\x00"+action+"\x00", id, answer)
	r := &g.refused
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[key]; ok {
		return false
	}
	if r.seen == nil {
		r.seen = make(map[[sha256.Size]byte]struct{})
	}
	if len(r.order) == maxRefusals {
		delete(r.seen, r.order[0])
		r.order = r.order[1:]
	}
	r.seen[key] = struct{}{}
	r.order = append(r.order, key)
	return true
}
