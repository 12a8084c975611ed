package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
	streamApprover                                 // approver i uses streamApprover+i
	streamPractice = streamApprover + MaxApprovals // practice cards
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
	practiceCards      int // practice cards placed
	practiceDecided    int // decisions on practice cards, summed over approvers
	practiceCaught     int // of which denials
	maliciousDecided   int // decisions on malicious cards, summed over approvers
	maliciousCaught    int // of which denials
}

// request is one call that needs approval.
type request struct {
	malicious bool
	practice  bool          // a practice card the gate placed: never proposed, never executed
	arrived   time.Duration // first proposal
	user      string
	agent     string
	session   string
	z         float64 // the card's share of every approver's answer
	to        string  // the recipient, as the request spells it
	target    flood.Target
	fresh     bool // to a target the operator's history had not seen when it arrived
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

	benignRNG, attackRNG, practiceRNG *rand.Rand
	approvers                         []approverState
	approverIDs                       []string // the primary approvers, whom every card reaches
	primary                           int      // how many approvers every card reaches
	group                             string   // the approver group named on every ticket
	aids                              aids

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
	s.benignRNG, s.attackRNG, s.practiceRNG = stream(streamBenign), stream(streamAttack), stream(streamPractice)
	s.primary = ctl.Approvals
	s.approvers = make([]approverState, max(ctl.Approvals, ctl.firstContactApprovals()))
	for i := range s.approvers {
		id := "user:approver-" + strconv.Itoa(i+1)
		s.approvers[i] = approverState{id: id, rng: stream(streamApprover + i)}
		if i < s.primary {
			s.approverIDs = append(s.approverIDs, id)
		}
	}
	if ctl.Approvals > 1 {
		s.group = "group:desk"
	}
	s.aids = aids{practice: ctl.Practice > 0, confirm: ctl.Confirm}
	s.maliciousEffect = []byte(`{"args":{"to":"payout@attacker.example"},"tool":"send_payment"}`)
	s.maliciousDigest = canon.Sum(s.maliciousEffect)
	if ctl.Flood {
		s.st = memory.New(&memory.Options{Clock: s.clock})
		lim, err := flood.New(s.st, ctl.Limits, s.clock)
		if err != nil {
			return outcome{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		s.lim, s.caps = lim, lim.Caps()
		if ctl.Targets {
			if err := s.introduceKnown(); err != nil {
				return outcome{}, err
			}
		}
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

// interarrival draws when the next arrival of a Poisson stream of perHour
// arrivals an hour comes; a draw past MaxShift comes at MaxShift, after
// every shift.
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
	r := request{arrived: s.now, user: benignUser(u), agent: "agent:assist", session: "main",
		z: s.benignRNG.NormFloat64()}
	// Two draws for the target whatever the controls, so that every
	// configuration meets the same requests.
	fresh, known := s.benignRNG.Float64() < s.sc.BenignFirstContact, s.benignRNG.IntN(max(s.sc.KnownTargets, 1))
	if fresh {
		r.to = "someone@new-" + strconv.Itoa(n) + ".example"
	} else {
		r.to = "someone@" + knownTarget(known)
	}
	if err := s.withTarget(&r, fresh); err != nil {
		return err
	}
	if err := s.add(r); err != nil {
		return err
	}
	s.offer(n)
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
		targets := max(a.Targets, 1)
		r.to = attackAddress(s.out.malicious%targets, targets, n, a.Disguise)
		if err := s.withTarget(&r, true); err != nil {
			return err
		}
		if err := s.add(r); err != nil {
			return err
		}
		s.offer(n)
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
	case s.sc.Attack.Disguise || s.sc.Attack.Targets > 1:
		// Each differs: none merges.
		e = []byte(`{"args":{"amount":` + strconv.Itoa(900+n) + `,"to":` + strconv.Quote(r.to) + `},"tool":"send_payment"}`)
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
		return s.show(n, false)
	}
	fr := flood.Request{User: r.user, Agent: r.agent, Session: r.session, Approvers: s.approverIDs, Target: r.target}
	adm, err := s.lim.Admission(s.ctx, fr)
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
			return s.show(n, adm.FirstContact)
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

// knownTarget is the k-th target the operator's history holds.
func knownTarget(k int) string { return "partner-" + strconv.Itoa(k) + ".example" }

// introduceKnown puts the team's known targets in the operator's
// history, as an operator importing the team's contacts would.
func (s *shift) introduceKnown() error {
	for k := range max(s.sc.KnownTargets, 1) {
		t, err := flood.DomainTarget(knownTarget(k))
		if err != nil {
			return fmt.Errorf("sim: known target: %w", err)
		}
		if err := s.lim.Introduce(s.ctx, t); err != nil {
			return fmt.Errorf("sim: introduce: %w", err)
		}
	}
	return nil
}

// withTarget reads r's target from its recipient, as a gate would, when
// the target limits are on.
func (s *shift) withTarget(r *request, fresh bool) error {
	r.fresh = fresh
	if !s.ctl.Flood || !s.ctl.Targets {
		return nil
	}
	t, err := flood.EmailTarget(r.to)
	if err != nil {
		return fmt.Errorf("sim: target: %w", err)
	}
	r.target = t
	return nil
}

// attackAddress is the recipient of the attacker's n-th request: the
// i-th of its targets' domains, spelled differently each time when
// disguised (another mailbox, plus-addressing, letter case, a subdomain,
// a trailing dot, full-width letters), so that no two requests look
// alike. flood.EmailTarget folds every spelling back to the domain.
func attackAddress(i, targets, n int, disguise bool) string {
	dom := "attacker.example"
	if targets > 1 {
		dom = "attacker-" + strconv.Itoa(i) + ".example"
	}
	if !disguise {
		return "payout@" + dom
	}
	switch n % 5 {
	case 0:
		return "payout+" + strconv.Itoa(n) + "@" + dom
	case 1:
		return "Billing@Pay." + strings.ToUpper(dom) + "."
	case 2:
		return "ap-" + strconv.Itoa(n) + "@eu." + dom
	case 3:
		return "Accounts <finance@" + strings.Replace(dom, "a", "ａ", 1) + ">"
	default:
		return "treasury@" + dom + "."
	}
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
