package ticketstore

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/agentstepup/asu/store"
)

// RefusalWindow is how long identical refusals of one ticket are counted
// rather than written to the audit chain.
const RefusalWindow = time.Hour

// MaxRefusalKinds bounds the (ticket, state, reason) kinds a
// [RefusalLog] remembers.
const MaxRefusalKinds = 4096

// RefusalLog remembers the refusals to run a ticket (an Execute, an
// execution token) that were written to the audit chain, so that
// identical ones within [RefusalWindow] are only counted: the chain grows
// by at most one row per ticket, state, reason and window, however often
// an agent asks. The zero value is ready to use; it is safe for
// concurrent use.
type RefusalLog struct {
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]*refusalEntry
	order [][sha256.Size]byte // oldest first
}

// refusalEntry is one kind of refusal of one ticket: when its row was
// last written and how many refusals were counted since.
type refusalEntry struct {
	written time.Time
	since   int
}

// Admit reports whether a refusal of ticket id in state for reason at
// now is to be written, and how many identical refusals since the last
// written one it stands for. A now before the last row's time (a clock
// stepped back) is within the window.
func (l *RefusalLog) Admit(id string, state store.State, reason string, now time.Time) (bool, int) {
	key := sha256.Sum256([]byte(id + "\x00" + string(state) + "\x00" + reason))
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.seen[key]; ok {
		if now.Before(e.written.Add(RefusalWindow)) {
			e.since++
			return false, 0
		}
		n := e.since
		e.written, e.since = now, 0
		return true, n
	}
	if l.seen == nil {
		l.seen = make(map[[sha256.Size]byte]*refusalEntry)
	}
	if len(l.order) >= MaxRefusalKinds {
		delete(l.seen, l.order[0])
		l.order = l.order[1:]
	}
	l.seen[key] = &refusalEntry{written: now}
	l.order = append(l.order, key)
	return true, 0
}
