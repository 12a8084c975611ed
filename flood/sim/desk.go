package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
)

// The approvers' desk: cards, each approver's queue, and what happens to
// a card when an approver answers it.

// cardState is where a card stands.
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
	need      int // approvals it needs
}

// approverState is one approver at the desk.
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

// offer counts request n in the load of every approver it would reach,
// whether or not flood control lets it through: the load that sets an
// approver's pace is the demand on the desk, so that a limit on inflow
// is credited once, for the cards it refuses, and not a second time for
// a slower read (a pessimistic choice). The approvers who see first
// contacts only are offered those.
func (s *shift) offer(n int) {
	r := &s.reqs[n]
	for i := range s.approvers {
		if i < s.primary || (r.fresh && !r.practice) {
			s.approvers[i].arrivals = append(s.approvers[i].arrivals, s.now)
		}
	}
}

// show makes request n a card and puts it in its approvers' queues: the
// primary approvers, and for a first contact under a stricter rule the
// approvers it adds. After a real card the gate may place a practice
// card.
func (s *shift) show(n int, firstContact bool) error {
	c := len(s.cards)
	need := s.ctl.Approvals
	if firstContact && s.ctl.firstContactApprovals() > need {
		need = s.ctl.firstContactApprovals()
	}
	s.cards = append(s.cards, card{req: n, expires: s.now + s.sc.TTL, need: need})
	r := &s.reqs[n]
	if r.malicious {
		s.out.maliciousCards++
	}
	for i := range need {
		a := &s.approvers[i]
		a.queue = append(a.queue, c)
		s.out.prompts++
		if !a.busy {
			if err := s.next(i); err != nil {
				return err
			}
		}
	}
	if r.practice || s.ctl.Practice <= 0 {
		return nil
	}
	u, z := s.practiceRNG.Float64(), s.practiceRNG.NormFloat64()
	if u >= s.ctl.Practice {
		return nil
	}
	p := len(s.reqs)
	if err := s.add(request{practice: true, arrived: s.now, z: z}); err != nil {
		return err
	}
	s.out.practiceCards++
	s.offer(p)
	return s.show(p, false)
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
		dec := s.sc.Approver.decide(r.malicious || r.practice, s.now, d, u, s.ctl.Dwell, s.aids)
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
	if r := &s.reqs[cd.req]; r.malicious || r.practice {
		// Every answer counts for the catch rate, decided first or not:
		// the figures page would count each approver's decision.
		caught := 0
		if !ev.approved {
			caught = 1
		}
		if r.practice {
			s.out.practiceDecided++
			s.out.practiceCaught += caught
		} else {
			s.out.maliciousDecided++
			s.out.maliciousCaught += caught
		}
	}
	switch {
	case cd.state != cardPending:
	case s.now >= cd.expires:
		// The store refuses an approval at or after the expiry.
		if err := s.expire(ev.card); err != nil {
			return err
		}
	case !ev.approved:
		if err := s.resolve(ev.card, cardDenied, a.id); err != nil {
			return err
		}
	default:
		if cd.approvals++; cd.approvals >= cd.need {
			if err := s.resolve(ev.card, cardApproved, a.id); err != nil {
				return err
			}
		}
	}
	return s.next(ev.n)
}

// resolve records a card's final decision, by the approver who made it
// final: in the store and flood's lockout runs when flood control is on,
// and as an execution when approved.
func (s *shift) resolve(c int, to cardState, by string) error {
	cd := &s.cards[c]
	cd.state = to
	r := &s.reqs[cd.req]
	if r.practice {
		// Never executed, never parked, never a flood decision: the
		// approver is told it was practice.
		return nil
	}
	if to == cardApproved {
		if r.malicious {
			s.out.maliciousExecuted++
		} else {
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
	if _, err := s.st.Resolve(s.ctx, cardID(c), store.Resolution{To: st, Approver: by, At: s.clock()}, nil); err != nil {
		return fmt.Errorf("sim: resolve: %w", err)
	}
	fr := flood.Request{User: r.user, Agent: r.agent, Session: r.session, Target: r.target}
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
	if !s.ctl.Flood || s.reqs[cd.req].practice {
		return nil
	}
	if _, err := s.st.Resolve(s.ctx, cardID(c), store.Resolution{To: store.Expired, At: s.clock()}, nil); err != nil {
		return fmt.Errorf("sim: expire: %w", err)
	}
	return nil
}
