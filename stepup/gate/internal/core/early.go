package core

import "crypto/sha256"

// An answer refused because it came too soon after the card was shown
// must never count later: otherwise whoever saw it go by (the approver's
// page, a proxy, the agent reading its own logs) resends the same bytes
// once the dwell is over, and the approval stands although nobody read
// the card for the dwell time. The gate remembers every such answer (by
// hash, per ticket, at most maxRefusals of them) and refuses it for good;
// the approver signs again.

// Early remembers that answer, about ticket id, was refused as too soon.
func (g *Gate) Early(id string, answer []byte) {
	key := earlyKey(id, answer)
	r := &g.early
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[key]; ok {
		return
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
}

// WasEarly reports whether answer, about ticket id, was refused as too
// soon before.
func (g *Gate) WasEarly(id string, answer []byte) bool {
	key := earlyKey(id, answer)
	r := &g.early
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.seen[key]
	return ok
}

func earlyKey(id string, answer []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte("asu/early\x00"))
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(answer)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
