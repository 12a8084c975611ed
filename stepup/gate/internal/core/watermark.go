package core

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// watermarkTag separates the MACs of watermark entries from every other
// use of the gate's key.
const watermarkTag = "asu/v1/watermark"

// ClockStepTolerance is how far the store's clock may read behind the
// newest time the gate has seen before the gate takes it for a clock
// stepped back. Within it the gate keeps deciding with the newest time,
// so it never judges an expiry with a time earlier than one it used.
const ClockStepTolerance = store.MaxSkew / 2

// compactAt is the number of entries past which a Watermark rewrites its
// keeper with the newest mark and the runs of the last spentKept.
const (
	compactAt = 1 << 14
	spentKept = 1 << 12
)

// Mark is how far the store had gone when the gate last looked: the audit
// chain's length and head, and the newest time of the store's clock.
type Mark struct {
	Seq  int64
	Head canon.Digest
	Time time.Time
}

// Spent is a run the gate was about to start, as its watermark keeps it.
type Spent struct {
	Ticket string
	Key    string // the idempotency key the executor saw
	At     time.Time
}

// RollbackError says how the store went back behind the gate's mark.
type RollbackError struct {
	Store  Mark   // the store as found
	Marked Mark   // the mark it is behind
	Why    string // which of them disagree, in words
}

func (e *RollbackError) Error() string {
	found := "clock " + e.Store.Time.UTC().Format(time.RFC3339Nano)
	if e.Store.Seq >= 0 {
		found = fmt.Sprintf("seq %d head %s, %s", e.Store.Seq, short(e.Store.Head), found)
	}
	return fmt.Sprintf("%v: %s (store: %s; mark: seq %d head %s, clock %s); reconcile after review",
		stepup.ErrRolledBack, e.Why, found, e.Marked.Seq, short(e.Marked.Head), e.Marked.Time.UTC().Format(time.RFC3339Nano))
}

func (e *RollbackError) Unwrap() error { return stepup.ErrRolledBack }

func short(d canon.Digest) string { return hex.EncodeToString(d[:6]) }

// Watermark is a gate's mark of its store, kept by a [plug.Watermarks]
// outside it. It is safe for concurrent use.
type Watermark struct {
	keep  plug.Watermarks
	peers []plug.Watermarks    // other gates' marks of the same store, read at open, never written
	keys  func() *keyring.Ring // the gate's ring: the current key writes, any key in force at an entry's time reads

	mu      sync.Mutex
	opened  bool
	mark    Mark      // newest seen; only grows
	saved   int64     // the Seq last written
	savedAt time.Time // the Time last written
	entries int
	spent   []Spent // the newest runs, oldest first, at most spentKept
	last    string  // the MAC of the last entry, which the next one chains to
	fresh   bool    // the keeper holds no mark
	reset   *Mark   // the newest reconcile any keeper recorded, or nil
	held    *RollbackError
}

// NewWatermark returns the watermark kept by keep, authenticated with the
// gate's keys. The marks of peers, other gates of the same store, are read
// with it when it opens: the mark starts from the furthest of them, so a
// gate that missed what another saw (a replica that was stopped, one whose
// keeper is new) holds as that one would.
func NewWatermark(keep plug.Watermarks, keys func() *keyring.Ring, peers ...plug.Watermarks) *Watermark {
	return &Watermark{keep: keep, keys: keys, peers: peers}
}

// entry is one line of a keeper.
type entry struct {
	Seq    int64  `json:"seq"`
	Head   string `json:"head"`
	Time   int64  `json:"time"` // Unix microseconds
	Ticket string `json:"ticket,omitempty"`
	Key    string `json:"key,omitempty"`
	Reset  bool   `json:"reset,omitempty"` // an operator reconciled here
	Prev   string `json:"prev,omitempty"`  // the MAC of the entry before, none for the first
	Kid    string `json:"kid,omitempty"`   // the id of the gate key that made MAC
	MAC    string `json:"mac"`
}

func mac(secret []byte, e entry) string {
	msg := make([]byte, 0, 128)
	msg = append(append(msg, watermarkTag...), 0)
	msg = binary.BigEndian.AppendUint64(msg, uint64(e.Seq))
	msg = binary.BigEndian.AppendUint64(msg, uint64(e.Time))
	for _, s := range [...]string{e.Head, e.Ticket, e.Key, e.Prev, e.Kid} {
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(s)))
		msg = append(msg, s...)
	}
	if e.Reset {
		msg = append(msg, 1)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// encode makes the entry of m (and run s, if any) chained to prev, and
// returns it with its MAC.
func (w *Watermark) encode(m Mark, s *Spent, reset bool, prev string) ([]byte, string) {
	e := entry{Seq: m.Seq, Head: m.Head.String(), Time: m.Time.UnixMicro(), Reset: reset, Prev: prev}
	if s != nil {
		e.Ticket, e.Key = s.Ticket, s.Key
	}
	k := w.keys().Current()
	e.Kid = k.ID
	e.MAC = mac(k.Secret, e)
	b, _ := json.Marshal(e)
	return b, e.MAC
}

// decode reads entry number n (from 1) of the keeper, which must chain
// to prev, the MAC of the entry before it.
func (w *Watermark) decode(n int, b []byte, prev string) (entry, error) {
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return entry{}, fmt.Errorf("entry %d does not parse", n)
	}
	got, err := hex.DecodeString(e.MAC)
	if err != nil {
		return entry{}, fmt.Errorf("entry %d is not authenticated by this gate's keys", n)
	}
	// An entry is judged by the keys in force when it was written: a key
	// rotated out since still reads the marks it made.
	if _, err := w.keys().Verify(e.Kid, time.UnixMicro(e.Time), func(secret []byte) bool {
		want, _ := hex.DecodeString(mac(secret, e))
		return hmac.Equal(got, want)
	}); err != nil {
		return entry{}, fmt.Errorf("entry %d is not authenticated by this gate's keys: %v", n, err)
	}
	if e.Prev != prev {
		return entry{}, fmt.Errorf("entry %d does not follow the entry before it: entries were removed or reordered", n)
	}
	if _, err := canon.ParseDigest(e.Head); err != nil || e.Seq < 0 {
		return entry{}, fmt.Errorf("entry %d holds no mark", n)
	}
	return e, nil
}

// open loads the keeper, and the peers' marks, once. A keeper that does
// not read back whole is a mark this gate cannot trust: it holds, as a
// rollback would; so does a peer's.
func (w *Watermark) open(ctx context.Context) error {
	if w.opened {
		return nil
	}
	lines, err := w.keep.Load(ctx)
	if err != nil {
		return fmt.Errorf("%w: the watermark: %v", stepup.ErrStore, err)
	}
	w.opened = true
	w.entries, w.spent, w.mark = len(lines), nil, Mark{}
	own, last, err := w.chain(lines)
	if err != nil {
		w.held = &RollbackError{Why: "the watermark is damaged: " + err.Error()}
		return w.held
	}
	w.last = last
	w.fresh = len(own) == 0
	all := [][]entry{own}
	for i, p := range w.peers {
		lines, err := p.Load(ctx)
		if err != nil {
			w.opened = false
			return fmt.Errorf("%w: peer watermark %d: %v", stepup.ErrStore, i+1, err)
		}
		es, _, err := w.chain(lines)
		if err != nil {
			w.held = &RollbackError{Why: fmt.Sprintf("peer watermark %d is damaged: %v", i+1, err)}
			return w.held
		}
		all = append(all, es)
	}
	w.fold(all)
	w.saved, w.savedAt = w.mark.Seq, w.mark.Time
	for _, e := range own {
		if e.Kid != w.keys().Current().ID {
			// Written under a key rotated out since: written again under
			// the current one, before the old key's grace ends.
			return w.compactLocked(ctx, false)
		}
	}
	return nil
}

// chain decodes the entries of one keeper, each chained to the one before,
// and returns them with the MAC of the last.
func (w *Watermark) chain(lines [][]byte) ([]entry, string, error) {
	out := make([]entry, 0, len(lines))
	last := ""
	for i, b := range lines {
		e, err := w.decode(i+1, b, last)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
		last = e.MAC
	}
	return out, last, nil
}

// fold makes the mark and the runs of the keepers' entries: the furthest
// chain position and the newest time any of them saw, and every run. An
// operator's reconcile (a reset entry) in any keeper reviewed everything
// seen before it: entries older than the newest reset count in none.
func (w *Watermark) fold(keepers [][]entry) {
	var reset int64 = math.MinInt64
	for _, es := range keepers {
		for _, e := range es {
			if e.Reset && e.Time > reset {
				reset = e.Time
			}
		}
	}
	for _, es := range keepers {
		for _, e := range es {
			if e.Time < reset {
				continue
			}
			head, _ := canon.ParseDigest(e.Head)
			m := Mark{Seq: e.Seq, Head: head, Time: time.UnixMicro(e.Time)}
			if e.Reset && e.Time == reset {
				w.reset = &m
			}
			if m.Seq > w.mark.Seq || m.Seq == w.mark.Seq && w.mark.Head == (canon.Digest{}) {
				w.mark.Seq, w.mark.Head = m.Seq, m.Head
			}
			if m.Time.After(w.mark.Time) {
				w.mark.Time = m.Time
			}
			if e.Ticket != "" {
				w.remember(Spent{Ticket: e.Ticket, Key: e.Key, At: m.Time})
			}
		}
	}
}

func (w *Watermark) remember(s Spent) {
	if len(w.spent) >= spentKept {
		w.spent = append(w.spent[:0], w.spent[len(w.spent)-spentKept/2:]...)
	}
	w.spent = append(w.spent, s)
}

// Clock checks a reading t of the store's clock against the newest time
// seen and returns the time to decide with: never earlier than one the
// gate already used. A store that went back, by its chain or its clock,
// is refused.
func (w *Watermark) Clock(ctx context.Context, st store.AuditLog, t time.Time) (time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != nil {
		return time.Time{}, w.held
	}
	if err := w.start(ctx, st, t); err != nil {
		return time.Time{}, err
	}
	switch {
	case t.Before(w.mark.Time.Add(-ClockStepTolerance)):
		return time.Time{}, w.hold(ctx, &RollbackError{Store: Mark{Seq: -1, Time: t}, Marked: w.mark,
			Why: "the store's clock stepped back"})
	case t.Before(w.mark.Time):
		return w.mark.Time, nil
	}
	w.mark.Time = t
	return t, nil
}

// Check reads the store's audit head and holds if the store is behind the
// mark or forks from it; otherwise the mark moves up to the head.
func (w *Watermark) Check(ctx context.Context, st store.AuditLog, now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != nil {
		return w.held
	}
	if err := w.start(ctx, st, now); err != nil {
		return err
	}
	return w.checkLocked(ctx, st, now)
}

// start loads the keeper and checks the store against it the first time
// the watermark is used, and writes the mark as found, so that a store the
// gate has used always has one. A store that could not be read is asked
// again next time.
func (w *Watermark) start(ctx context.Context, st store.AuditLog, now time.Time) error {
	if w.opened {
		return nil
	}
	if err := w.open(ctx); err != nil {
		return err
	}
	if w.fresh {
		// A keeper with no mark on a store with history: the store may be
		// one restored from a backup, and the runs this gate's lost marks
		// saw after it was taken cannot be told, whatever the peers say.
		head, err := st.AuditHead(ctx)
		if err != nil {
			w.opened = false
			return ticketstore.Err("the watermark's check of the audit head", err)
		}
		if head.Seq > 0 {
			w.mark.Time = now // what exists now is what a reconcile holds
			w.held = &RollbackError{Store: Mark{Seq: head.Seq, Head: head.Hash, Time: now}, Marked: w.mark,
				Why: "the watermark is new but the store has history, so whether it was restored from a backup cannot be told (a new replica starts from a copy of a running replica's watermark)"}
			return w.held // nothing is written: the keeper stays new, and holds again at a restart
		}
		w.fresh = false
	}
	if err := w.checkLocked(ctx, st, now); err != nil {
		w.opened = w.held != nil
		return err
	}
	if now.After(w.mark.Time) {
		w.mark.Time = now
	}
	if err := w.appendLocked(ctx, nil); err != nil {
		w.opened = false
		return err
	}
	return nil
}

// hold makes rb the rollback the gate holds for, and writes the mark it
// holds by, as far as it can, so that a restart holds again.
func (w *Watermark) hold(ctx context.Context, rb *RollbackError) *RollbackError {
	w.held = rb
	_ = w.appendLocked(ctx, nil) // the mark is already on disk as far as anything ran under it
	return rb
}

func (w *Watermark) checkLocked(ctx context.Context, st store.AuditLog, now time.Time) error {
	head, err := st.AuditHead(ctx)
	if err != nil {
		return ticketstore.Err("the watermark's check of the audit head", err)
	}
	found := Mark{Seq: head.Seq, Head: head.Hash, Time: now}
	switch {
	case head.Seq < w.mark.Seq:
		return w.hold(ctx, &RollbackError{Store: found, Marked: w.mark, Why: "the store's audit chain is shorter than the mark"})
	case head.Seq == w.mark.Seq:
		if head.Hash != w.mark.Head {
			return w.hold(ctx, &RollbackError{Store: found, Marked: w.mark, Why: "the store's audit chain forks from the mark"})
		}
	case w.mark.Seq > 0:
		rows, err := st.AuditSeq(ctx, uint64(w.mark.Seq), uint64(w.mark.Seq)+1)
		if err != nil {
			return ticketstore.Err("the watermark's check of the audit chain", err)
		}
		if len(rows) != 1 || rows[0].Hash != w.mark.Head {
			return w.hold(ctx, &RollbackError{Store: found, Marked: w.mark, Why: "the store's audit chain forks from the mark"})
		}
	}
	w.mark.Seq, w.mark.Head = head.Seq, head.Hash
	return nil
}

// Spend records, durably and before it starts, that ticket a is about to
// run with its idempotency key; it first checks the store against the
// mark. An error means the run must not start.
func (w *Watermark) Spend(ctx context.Context, st store.AuditLog, a store.Approval, now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != nil {
		return w.held
	}
	if err := w.start(ctx, st, now); err != nil {
		return err
	}
	if err := w.checkLocked(ctx, st, now); err != nil {
		return err
	}
	s := Spent{Ticket: a.ID, Key: a.IdempotencyKey, At: now}
	if err := w.appendLocked(ctx, &s); err != nil {
		return err
	}
	w.remember(s)
	return nil
}

// Advance checks the store against the mark and, if the chain grew since
// the mark was last written, writes it.
func (w *Watermark) Advance(ctx context.Context, st store.AuditLog, now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != nil {
		return w.held
	}
	if err := w.start(ctx, st, now); err != nil {
		return err
	}
	if err := w.checkLocked(ctx, st, now); err != nil {
		return err
	}
	if w.mark.Seq == w.saved && w.entries > 0 && w.mark.Time.Sub(w.savedAt) < time.Minute {
		return nil
	}
	return w.appendLocked(ctx, nil)
}

func (w *Watermark) appendLocked(ctx context.Context, s *Spent) error {
	if w.entries >= compactAt {
		if err := w.compactLocked(ctx, false); err != nil {
			return err
		}
	}
	b, mac := w.encode(w.mark, s, false, w.last)
	if err := w.keep.Append(ctx, b); err != nil {
		return fmt.Errorf("%w: the watermark: %v", stepup.ErrStore, err)
	}
	w.last = mac
	w.entries++
	w.saved, w.savedAt = w.mark.Seq, w.mark.Time
	return nil
}

// compactLocked rewrites the keeper as the mark and the remembered runs;
// reset marks an operator's reconcile, after which nothing before counts.
func (w *Watermark) compactLocked(ctx context.Context, reset bool) error {
	lines := make([][]byte, 0, len(w.spent)+2)
	prev := ""
	if w.reset != nil && !reset {
		// The newest reconcile stays, at its time: the peers' entries
		// older than it are still reviewed.
		var b []byte
		b, prev = w.encode(*w.reset, nil, true, prev)
		lines = append(lines, b)
	}
	for _, s := range w.spent {
		var b []byte
		b, prev = w.encode(Mark{Seq: 0, Time: s.At}, &s, false, prev)
		lines = append(lines, b)
	}
	b, prev := w.encode(w.mark, nil, reset, prev)
	lines = append(lines, b)
	if err := w.keep.Replace(ctx, lines); err != nil {
		return fmt.Errorf("%w: the watermark: %v", stepup.ErrStore, err)
	}
	w.last = prev
	w.entries = len(lines)
	w.saved, w.savedAt = w.mark.Seq, w.mark.Time
	if reset {
		m := w.mark
		w.reset = &m
	}
	return nil
}

// Held returns the rollback the gate holds for, or nil.
func (w *Watermark) Held() *RollbackError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

// State returns the mark and the runs remembered since the last reconcile.
func (w *Watermark) State() (Mark, []Spent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mark, append([]Spent(nil), w.spent...)
}

// Reset makes found the mark after an operator reconciled, durably, and
// lifts the hold.
func (w *Watermark) Reset(ctx context.Context, found Mark) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opened, w.fresh = true, false
	w.mark, w.spent = found, nil
	if err := w.compactLocked(ctx, true); err != nil {
		return err
	}
	w.held = nil
	return nil
}

// IsRolledBack reports whether err is the gate holding for a rollback.
func IsRolledBack(err error) bool { return errors.Is(err, stepup.ErrRolledBack) }
