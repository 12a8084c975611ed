package sim

import "time"

// eventKind says what an event does.
type eventKind uint8

const (
	evBenign eventKind = iota // a benign request arrives
	evAttack                  // a burst of malicious requests arrives
	evRetry                   // a refused benign request is proposed again
	evDone                    // an approver answers a card
)

// event is one thing that happens at a time in the shift.
type event struct {
	at   time.Duration
	seq  uint64 // ties are taken in the order scheduled
	kind eventKind
	n    int // evRetry: request; evDone: approver
	// evDone
	card     int
	approved bool
	spent    time.Duration
}

// events is a binary min-heap of events by time, then by the order they
// were scheduled.
type events []event

func (e events) less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}

func (e *events) push(ev event) {
	*e = append(*e, ev)
	h := *e
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (e *events) pop() event {
	h := *e
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*e = h
	return top
}
