package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// epoch is when every simulated shift starts: aligned to every window
// flood's default limits use, so that each run sees the same windows.
var epoch = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// capBackoff is how long a benign runtime waits before proposing again
// after a pending cap refused it (a cap refusal names no retry time).
// An assumption.
const capBackoff = time.Minute

// The random streams of one run. Arrivals have streams of their own, so
// every configuration run with the same seed sees the same requests at the
// same times (common random numbers), and only the approvers' answers and
// the controls differ.
const (
	streamBenign = iota
	streamAttack
	streamApprover // approver i uses streamApprover+i
)

// outcome is what one shift produced.
type outcome struct {
	malicious          int // malicious requests sent
	maliciousExecuted  int
	maliciousCards     int // cards shown for malicious requests (merged copies once)
	maliciousRefused   int // malicious requests flood control refused
	maliciousMerged    int // malicious requests merged into a pending card
	benign             int // benign requests that arrived
	benignDone         int // benign requests executed (approved by all)
	benignRefused      int // benign proposals refused by flood control (each retry counts)
	maliciousRefusedBy map[string]int
	benignRefusedBy    map[string]int
	latencies          []time.Duration
	prompts            int // cards reaching approvers, summed over approvers
	approverHours      float64
	decisions          []time.Duration
}

// request is one call that needs approval.
type request struct {
	malicious bool
	arrived   time.Duration // first proposal
	user      string
	agent     string
	session   string
	z         float64 // the card's share of every approver's answer
	done      bool
}

type cardState uint8

const (
	cardPending cardState = iota
	cardApproved
	cardDenied
	cardExpired
)

// card is one ticket shown to the approvers; merged duplicates share it.
type card struct {
	req       int // the request that parked it
	expires   time.Duration
	state     cardState
	approvals int
}

type approverState struct {
	id       string
	rng      *rand.Rand
	queue    []int           // card indexes, first come first served
	arrivals []time.Duration // when each card reached the approver
	head     int             // arrivals before head are over an hour old
	busy     bool
}

// perHour is how many cards reached the approver in the hour up to now.
// Before the shift nothing did: people start the shift rested.
func (a *approverState) perHour(now time.Duration) float64 {
	for a.head < len(a.arrivals) && a.arrivals[a.head] <= now-time.Hour {
		a.head++
	}
	return float64(len(a.arrivals) - a.head)
}

type eventKind uint8

const (
	evBenign eventKind = iota
	evAttack
	evRetry
	evDone
)

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

// shift simulates one shift.
type shift struct {
	ctx       context.Context
	sc        Scenario
	ctl       Controls
	now       time.Duration
	queue     events
	seq       uint64
	processed int

	benignRNG, attackRNG *rand.Rand
	approvers            []approverState
	approverIDs          []string
	group                string // the approver group named on every ticket

	lim  *flood.Limiter
	st   *memory.Store
	caps store.Caps

	reqs  []request
	cards []card
	out   outcome

	maliciousEffect []byte
	maliciousDigest canon.Digest
}

// runShift simulates one shift with the random streams of (seed, run).
func runShift(ctx context.Context, sc Scenario, ctl Controls, seed uint64, run int) (outcome, error) {
	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	s := &shift{ctx: ctx, sc: sc, ctl: ctl,
		out: outcome{maliciousRefusedBy: map[string]int{}, benignRefusedBy: map[string]int{}}}
	stream := func(k int) *rand.Rand {
		return rand.New(rand.NewPCG(seed, uint64(run)<<8|uint64(k)))
	}
	s.benignRNG, s.attackRNG = stream(streamBenign), stream(streamAttack)
	s.approvers = make([]approverState, ctl.Approvals)
	for i := range s.approvers {
		id := "user:approver-" + strconv.Itoa(i+1)
		s.approvers[i] = approverState{id: id, rng: stream(streamApprover + i)}
		s.approverIDs = append(s.approverIDs, id)
	}
	if ctl.Approvals > 1 {
		s.group = "group:desk"
	}
	s.maliciousEffect = []byte(`{"args":{"to":"payout@attacker.example"},"tool":"send_payment"}`)
	s.maliciousDigest = canon.Sum(s.maliciousEffect)
	if ctl.Flood {
		s.st = memory.New(&memory.Options{Clock: s.clock})
		lim, err := flood.New(s.st, ctl.Limits, s.clock)
		if err != nil {
			return outcome{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		s.lim, s.caps = lim, lim.Caps()
	}

	if sc.BenignRate > 0 {
		s.schedule(event{at: s.interarrival(s.benignRNG, sc.BenignRate), kind: evBenign})
	}
	if sc.Attack.Rate > 0 {
		s.schedule(event{at: s.interarrival(s.attackRNG, s.burstRate()), kind: evAttack})
	}
	if err := s.loop(); err != nil {
		return outcome{}, err
	}
	s.out.approverHours = float64(len(s.approvers)) * sc.Shift.Hours()
	return s.out, nil
}

// clock is the simulated time, for the store and the limiter.
func (s *shift) clock() time.Time { return epoch.Add(s.now) }

func (s *shift) burstRate() float64 { return s.sc.Attack.Rate / float64(s.sc.Attack.Burst) }

// interarrival draws the time to the next arrival of a Poisson stream of
// perHour arrivals an hour.
func (s *shift) interarrival(rng *rand.Rand, perHour float64) time.Duration {
	d := rng.ExpFloat64() / perHour * float64(time.Hour)
	if !(d < float64(MaxShift)) {
		return MaxShift
	}
	return s.now + time.Duration(d)
}

func (s *shift) schedule(ev event) {
	s.seq++
	ev.seq = s.seq
	s.queue.push(ev)
}

// loop processes events until none is left. Arrivals stop at the end of
// the shift; approvers work through what is still waiting, and cards
// expire after the TTL, so the loop ends.
func (s *shift) loop() error {
	for len(s.queue) > 0 {
		if s.processed++; s.processed > MaxEvents {
			return fmt.Errorf("%w: more than %d events in one shift", ErrBudget, MaxEvents)
		}
		if s.processed%4096 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		ev := s.queue.pop()
		s.now = ev.at
		var err error
		switch ev.kind {
		case evBenign:
			err = s.benignArrival()
		case evAttack:
			err = s.burst()
		case evRetry:
			err = s.propose(ev.n)
		case evDone:
			err = s.done(ev)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *shift) benignArrival() error {
	if s.now >= s.sc.Shift {
		return nil
	}
	n := len(s.reqs)
	u := s.benignRNG.IntN(s.sc.BenignUsers)
	if err := s.add(request{arrived: s.now, user: benignUser(u), agent: "agent:assist", session: "main",
		z: s.benignRNG.NormFloat64()}); err != nil {
		return err
	}
	s.out.benign++
	s.schedule(event{at: s.interarrival(s.benignRNG, s.sc.BenignRate), kind: evBenign})
	return s.propose(n)
}

func benignUser(i int) string { return "user:member-" + strconv.Itoa(i) }

// burst sends one burst of malicious requests, rotating over the
// attacker's requesters.
func (s *shift) burst() error {
	if s.now >= s.sc.Shift {
		return nil
	}
	a := s.sc.Attack
	for range a.Burst {
		n := len(s.reqs)
		who := s.out.malicious % a.Spread
		s.out.malicious++
		r := request{malicious: true, arrived: s.now, user: benignUser(0), agent: "agent:hijacked", session: "h",
			z: s.attackRNG.NormFloat64()}
		switch a.Scope {
		case flood.ScopeSession:
			r.session = "h-" + strconv.Itoa(who)
		case flood.ScopeAgent:
			r.agent = "agent:hijacked-" + strconv.Itoa(who)
		case flood.ScopeUser:
			r.user = benignUser(who)
		}
		if err := s.add(r); err != nil {
			return err
		}
		if err := s.propose(n); err != nil {
			return err
		}
	}
	s.schedule(event{at: s.interarrival(s.attackRNG, s.burstRate()), kind: evAttack})
	return nil
}

// effect returns the canonical effect of request n and its digest: each
// benign request is a distinct call; the attacker repeats one call, or
// varies the amount of each when disguised.
func (s *shift) effect(n int) ([]byte, canon.Digest) {
	r := &s.reqs[n]
	var e []byte
	switch {
	case !r.malicious:
		e = []byte(`{"args":{"n":` + strconv.Itoa(n) + `},"tool":"send_email"}`)
	case s.sc.Attack.Disguise:
		e = []byte(`{"args":{"amount":` + strconv.Itoa(900+n) + `,"to":"payout@attacker.example"},"tool":"send_payment"}`)
	default:
		return s.maliciousEffect, s.maliciousDigest
	}
	return e, canon.Sum(e)
}

// cardID is the ticket id of card c in the store.
func cardID(c int) string { return fmt.Sprintf("%032x", c) }

func (s *shift) add(r request) error {
	if len(s.reqs) >= MaxRequests {
		return fmt.Errorf("%w: more than %d requests in one shift", ErrBudget, MaxRequests)
	}
	s.reqs = append(s.reqs, r)
	return nil
}

// propose is the gate's propose for request n: flood admission, then
// parking (with pending caps and merging), then a card for every
// approver. A refused benign request is proposed again when its retry
// time comes, within the shift; a refused malicious one is dropped (the
// attacker sends more anyway).
func (s *shift) propose(n int) error {
	r := &s.reqs[n]
	if !s.ctl.Flood {
		return s.show(n)
	}
	fr := flood.Request{User: r.user, Agent: r.agent, Session: r.session, Approvers: s.approverIDs}
	err := s.lim.Admit(s.ctx, fr)
	var retry time.Duration
	var le *flood.LimitError
	switch {
	case errors.As(err, &le):
		// The gate tells the runtime to retry after whole seconds.
		retry = max(le.RetryAfter.Truncate(time.Second), time.Second)
		if retry < le.RetryAfter {
			retry += time.Second
		}
	case err != nil:
		return fmt.Errorf("sim: flood admission: %w", err)
	default:
		effect, digest := s.effect(n)
		a := store.Approval{
			ID: cardID(len(s.cards)), Effect: effect, Digest: digest, Tool: "send",
			EffectClass: "external", CreatedAt: s.clock(), ExpiresAt: s.clock().Add(s.sc.TTL),
			Requester: canon.Principal{User: r.user, Agent: r.agent}, User: r.user, Session: r.session,
			PolicyVersion: "sim", Approvers: s.group,
		}
		_, merged, err := s.st.Park(s.ctx, a, s.caps, nil)
		switch {
		case errors.Is(err, store.ErrPendingCap):
			retry = capBackoff
		case err != nil:
			return fmt.Errorf("sim: park: %w", err)
		case merged:
			if r.malicious {
				s.out.maliciousMerged++
			}
			// A merged benign request would be answered with its twin's
			// ticket; benign requests are all distinct, so none merges.
			return nil
		default:
			return s.show(n)
		}
	}
	reason := "pending cap"
	if le != nil {
		reason = refusalName(le)
	}
	if r.malicious {
		s.out.maliciousRefused++
		s.out.maliciousRefusedBy[reason]++
		return nil
	}
	s.out.benignRefused++
	s.out.benignRefusedBy[reason]++
	if at := s.now + retry; at < s.sc.Shift {
		s.schedule(event{at: at, kind: evRetry, n: n})
	}
	return nil
}

// show makes request n a card and puts it in every approver's queue.
func (s *shift) show(n int) error {
	c := len(s.cards)
	s.cards = append(s.cards, card{req: n, expires: s.now + s.sc.TTL})
	if s.reqs[n].malicious {
		s.out.maliciousCards++
	}
	for i := range s.approvers {
		a := &s.approvers[i]
		a.queue = append(a.queue, c)
		a.arrivals = append(a.arrivals, s.now)
		s.out.prompts++
		if !a.busy {
			if err := s.next(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// next has approver i take the next card still waiting, if any.
func (s *shift) next(i int) error {
	a := &s.approvers[i]
	for len(a.queue) > 0 {
		c := a.queue[0]
		a.queue = a.queue[1:]
		cd := &s.cards[c]
		if cd.state != cardPending {
			continue // decided by another approver, or expired
		}
		if s.now >= cd.expires {
			if err := s.expire(c); err != nil {
				return err
			}
			continue
		}
		// Two draws per card whatever the outcome, so a change of the
		// controls never shifts the draws of later cards.
		r := &s.reqs[cd.req]
		d := s.sc.Approver.drawTime(a.perHour(s.now), a.rng.NormFloat64())
		u := s.sc.Approver.uniform(r.z, a.rng.NormFloat64())
		dec := s.sc.Approver.decide(r.malicious, s.now, d, u, s.ctl.Dwell)
		a.busy = true
		s.schedule(event{at: s.now + dec.spent, kind: evDone, n: i, card: c, approved: dec.approve, spent: dec.spent})
		return nil
	}
	return nil
}

// done applies approver ev.n's answer and has them take the next card.
func (s *shift) done(ev event) error {
	a := &s.approvers[ev.n]
	a.busy = false
	s.out.decisions = append(s.out.decisions, ev.spent)
	cd := &s.cards[ev.card]
	switch {
	case cd.state != cardPending:
	case s.now >= cd.expires:
		// The store refuses an approval at or after the expiry.
		if err := s.expire(ev.card); err != nil {
			return err
		}
	case !ev.approved:
		if err := s.resolve(ev.card, cardDenied); err != nil {
			return err
		}
	default:
		if cd.approvals++; cd.approvals >= s.ctl.Approvals {
			if err := s.resolve(ev.card, cardApproved); err != nil {
				return err
			}
		}
	}
	return s.next(ev.n)
}

// resolve records a card's final decision: in the store and flood's
// lockout runs when flood control is on, and as an execution when
// approved.
func (s *shift) resolve(c int, to cardState) error {
	cd := &s.cards[c]
	cd.state = to
	r := &s.reqs[cd.req]
	if to == cardApproved {
		if r.malicious {
			s.out.maliciousExecuted++
		} else {
			r.done = true
			s.out.benignDone++
			s.out.latencies = append(s.out.latencies, s.now-r.arrived)
		}
	}
	if !s.ctl.Flood {
		return nil
	}
	st := store.Denied
	if to == cardApproved {
		st = store.Approved
	}
	if _, err := s.st.Resolve(s.ctx, cardID(c), store.Resolution{To: st, Approver: s.approverIDs[0], At: s.clock()}, nil); err != nil {
		return fmt.Errorf("sim: resolve: %w", err)
	}
	fr := flood.Request{User: r.user, Agent: r.agent, Session: r.session}
	if err := s.lim.Decided(s.ctx, fr, to == cardApproved); err != nil {
		return fmt.Errorf("sim: flood decision: %w", err)
	}
	return nil
}

// expire ends a card nobody decided in time. An expiry is not a decision:
// flood's lockout runs do not hear of it.
func (s *shift) expire(c int) error {
	cd := &s.cards[c]
	cd.state = cardExpired
	if !s.ctl.Flood {
		return nil
	}
	if _, err := s.st.Resolve(s.ctx, cardID(c), store.Resolution{To: store.Expired, At: s.clock()}, nil); err != nil {
		return fmt.Errorf("sim: expire: %w", err)
	}
	return nil
}

// quantile returns the q-quantile of ds (sorted in place), in seconds, or
// NaN when ds is empty.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)].Seconds()
}

// refusalName names a flood refusal: "rate/session", "lockout/user", ...
func refusalName(le *flood.LimitError) string {
	if errors.Is(le, flood.ErrLockedOut) {
		return "lockout/" + string(le.Scope)
	}
	return "rate/" + string(le.Scope)
}
