package notify

import (
	"container/heap"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/signed"
)

// Errors of [Verify] and [ReplayGuard.Verify]; test with errors.Is. A
// receiver answers ErrTooLarge with 413, ErrGuardFull with 503 (the sender
// retries), ErrReplayed with 200 or 409 (the sender stops), and the rest
// with 400 or 401.
var (
	// ErrMalformed means the request is not a delivery: not a POST, no,
	// two or an unparsable signature header, a body that is not a Notice,
	// or a delivery header that is sent twice or disagrees with the body.
	ErrMalformed = errors.New("notify: malformed delivery")
	// ErrBadSignature means no signature in the header is the HMAC of the
	// timestamp and body under the secret.
	ErrBadSignature = signed.ErrBadSignature
	// ErrStale means the signed timestamp is further from now than the
	// window, in either direction.
	ErrStale = signed.ErrStale
	// ErrTooLarge is [canon.ErrTooLarge], the one sentinel for input over
	// its bound: the body is longer than [MaxBodyBytes].
	ErrTooLarge = canon.ErrTooLarge
	// ErrReplayed means a [ReplayGuard] has already accepted this
	// delivery id.
	ErrReplayed = errors.New("notify: delivery already received")
	// ErrGuardFull means a [ReplayGuard] holds as many unexpired delivery
	// ids as it may; the delivery is refused, not let through unchecked.
	ErrGuardFull = errors.New("notify: replay guard full")
)

// Delivery is a verified delivery.
type Delivery struct {
	// ID is the delivery id: the same for every attempt to deliver one
	// Notice.
	ID string
	// Sent is the signed timestamp of this attempt, in whole seconds.
	Sent time.Time
	// Notice is what was delivered.
	Notice Notice
}

// Verify checks that r is a delivery signed with secret no further than
// window from now, and returns it. The signature is compared in constant
// time; the body is read up to [MaxBodyBytes] and no further. Verify does
// not remember deliveries: a request captured in transit verifies again
// until its timestamp leaves the window. Use a [ReplayGuard] to refuse
// that, or make handling a Notice idempotent by its delivery id. A
// signature or delivery header sent twice is refused, even with the same
// value twice: each signed header is one value, as in package httpexec.
func Verify(r *http.Request, secret []byte, window time.Duration, now time.Time) (Delivery, error) {
	if len(secret) < MinSecretBytes {
		return Delivery{}, ErrSecret
	}
	if window <= 0 {
		return Delivery{}, errors.New("notify: window must be positive")
	}
	if r.Method != http.MethodPost {
		return Delivery{}, fmt.Errorf("%w: method is not POST", ErrMalformed)
	}
	hs := r.Header.Values(HeaderSignature)
	if len(hs) != 1 {
		return Delivery{}, fmt.Errorf("%w: want one %s header", ErrMalformed, HeaderSignature)
	}
	t, sigs, err := parseSignature(hs[0])
	if err != nil {
		return Delivery{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	sent := time.Unix(t, 0).UTC()
	if d := now.Sub(sent); d > window || d < -window {
		return Delivery{}, ErrStale
	}
	if r.ContentLength > MaxBodyBytes {
		return Delivery{}, ErrTooLarge
	}
	if r.Body == nil {
		return Delivery{}, fmt.Errorf("%w: no body", ErrMalformed)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return Delivery{}, fmt.Errorf("%w: reading the body failed", ErrMalformed)
	}
	if len(body) > MaxBodyBytes {
		return Delivery{}, ErrTooLarge
	}
	want := sign(secret, t, body)
	ok := false
	for _, s := range sigs {
		// Every candidate is compared, so the time taken does not say
		// which one matched.
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return Delivery{}, ErrBadSignature
	}
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		return Delivery{}, fmt.Errorf("%w: body is not a notice", ErrMalformed)
	}
	if !validDeliveryID(w.Delivery) {
		return Delivery{}, fmt.Errorf("%w: bad delivery id", ErrMalformed)
	}
	// The delivery header is optional, but one that is there is one and
	// is the body's: a proxy or a receiver that reads the first value and
	// another that reads the last must not see two deliveries.
	switch hs := r.Header.Values(HeaderDelivery); {
	case len(hs) > 1:
		return Delivery{}, fmt.Errorf("%w: want at most one %s header", ErrMalformed, HeaderDelivery)
	case len(hs) == 1 && hs[0] != w.Delivery:
		return Delivery{}, fmt.Errorf("%w: %s header disagrees with the body", ErrMalformed, HeaderDelivery)
	}
	if err := w.Notice.Validate(); err != nil {
		return Delivery{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return Delivery{ID: w.Delivery, Sent: sent, Notice: w.Notice}, nil
}

// validDeliveryID reports whether id looks like one a [Webhook] makes: 32
// lowercase hex digits.
func validDeliveryID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ReplayGuard remembers the delivery ids it accepted, each until its
// timestamp leaves the window, and refuses them a second time. It holds at
// most capacity ids: when that many are unexpired it refuses new
// deliveries with [ErrGuardFull] rather than forget one. Only deliveries
// with a valid signature reach it, so only a holder of the secret can fill
// it. A ReplayGuard is safe for concurrent use; it remembers in process
// memory, so receivers behind a load balancer share nothing through it.
type ReplayGuard struct {
	capacity int
	mu       sync.Mutex
	seen     map[string]time.Time
	order    expiries
}

// NewReplayGuard returns a guard holding at most capacity delivery ids
// (at least 1).
func NewReplayGuard(capacity int) *ReplayGuard {
	capacity = max(capacity, 1)
	return &ReplayGuard{capacity: capacity, seen: make(map[string]time.Time)}
}

// Verify is [Verify], and then refuses a delivery id the guard already
// accepted with [ErrReplayed]. A retry of a delivery whose first attempt
// was accepted is refused too: the receiver already has the Notice.
func (g *ReplayGuard) Verify(r *http.Request, secret []byte, window time.Duration, now time.Time) (Delivery, error) {
	d, err := Verify(r, secret, window, now)
	if err != nil {
		return Delivery{}, err
	}
	if err := g.admit(d.ID, d.Sent.Add(window), now); err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// Len returns how many delivery ids the guard holds, expired or not.
func (g *ReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}

func (g *ReplayGuard) admit(id string, until, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	// An id is kept while an attempt of it can still verify: Verify
	// accepts a delivery exactly the window old, so only ids whose time
	// is strictly past are forgotten.
	for len(g.order) > 0 && g.order[0].until.Before(now) {
		e := heap.Pop(&g.order).(expiry)
		if u, ok := g.seen[e.id]; ok && !u.After(e.until) {
			delete(g.seen, e.id)
		}
	}
	if u, ok := g.seen[id]; ok {
		// A later attempt of the same delivery stays valid longer: keep
		// the id as long as any attempt of it could verify.
		if until.After(u) {
			g.seen[id] = until
			heap.Push(&g.order, expiry{id: id, until: until})
		}
		return ErrReplayed
	}
	if len(g.seen) >= g.capacity {
		return ErrGuardFull
	}
	g.seen[id] = until
	heap.Push(&g.order, expiry{id: id, until: until})
	return nil
}

// expiry is when the guard may forget an id.
type expiry struct {
	id    string
	until time.Time
}

// expiries is a min-heap of expiries, soonest first.
type expiries []expiry

func (h expiries) Len() int           { return len(h) }
func (h expiries) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiries) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
