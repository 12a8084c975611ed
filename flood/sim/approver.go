package sim

import (
	"fmt"
	"math"
	"time"
)

// The approver model's constants. Each says where its value comes from;
// "assumption" means the value is ours, chosen to be plausible, and no
// source measured it. The model has no human data behind it (seed 001
// says the same of the model it reports), so treat its absolute figures as
// a model's, and its comparisons between limits as the useful part. The
// one figure fitted to a target is the default attack volume
// ([DefaultAttackRate]), not a constant of the approver.
const (
	// DefaultRestedMiss is the chance that a rested approver, reading a
	// trusted card at leisure, approves a malicious one anyway. Seed 001
	// reports a catch rate of 0.98 for language-model approvers given a
	// trusted card; there are no human figures, and we take the same 2%
	// for people (an assumption). Most misses in the model come from
	// hurried reading, not from this floor.
	DefaultRestedMiss = 0.02

	// DefaultVigilanceGrowth is how much the rested miss grows with time
	// on shift, as a share of itself: misses rise by up to 50%. Mackworth
	// (1948, "The breakdown of vigilance during prolonged visual search",
	// Quarterly Journal of Experimental Psychology 1(1):6-21) found
	// detection falling within the first half hour of watch and more
	// slowly after; Warm, Parasuraman and Matthews (2008, "Vigilance
	// requires hard mental work and is stressful", Human Factors
	// 50(3):433-441) review the decrement since. The size is an
	// assumption: a wrong recipient on a trusted card is a far more
	// salient signal than Mackworth's clock jump, and salient signals
	// decay less.
	DefaultVigilanceGrowth = 0.5

	// DefaultVigilanceTau is the time constant of that growth: most of it
	// comes within the first half hour, after Mackworth (1948).
	DefaultVigilanceTau = 30 * time.Minute

	// DefaultReadTau is the time constant of reading: an approver who
	// spends d on a card has read a share 1 - exp(-d/τ) of what would
	// reveal a malicious effect. The exponential approach to an asymptote
	// is the form of the speed-accuracy tradeoff in Wickelgren (1977,
	// "Speed-accuracy tradeoff and information processing dynamics", Acta
	// Psychologica 41(1):67-85). Three seconds is an assumption: the
	// effect line and the recipient of a card are about ten words, a few
	// seconds at the adult reading rates of a few hundred words a minute
	// reviewed by Rayner et al. (2016, "So much to read, so little time",
	// Psychological Science in the Public Interest 17(1):4-34).
	DefaultReadTau = 3 * time.Second

	// DefaultUnloadedMedian is the median decision time of an approver
	// who is seldom asked: seed 002 sizes reviewer staffing on "60
	// seconds of real review each".
	DefaultUnloadedMedian = 60 * time.Second

	// DefaultFloorMedian is the median decision time under any load, the
	// floor it shrinks towards: seed 002's "a median decision time of a
	// few seconds means the control has gone".
	DefaultFloorMedian = 3 * time.Second

	// DefaultHalfRate is the prompt rate (prompts in the trailing hour) at
	// which the median's excess over the floor has halved. Thirty an hour
	// is what package flood's default approver inflow takes as about what
	// a person can read (seed 002: a minute of real review caps a person
	// near 60 an hour, and people stop reading well before). That people
	// answer faster and accept more as alerts grow more frequent is the
	// alert-fatigue finding of Ancker et al. (2017, "Effects of workload,
	// work complexity, and repeated alerts on alert fatigue in a clinical
	// decision support system", BMC Medical Informatics and Decision
	// Making 17:36) and the review by Cvach (2012, "Monitor alarm
	// fatigue: an integrative review", Biomedical Instrumentation &
	// Technology 46(4):268-277). The hyperbolic form is an assumption.
	DefaultHalfRate = 30.0

	// DefaultDecisionSpread is the standard deviation of the logarithm of
	// decision time (log-normal around the median). Decision times are
	// skewed to the right, with a tail of reflex answers below the median
	// and long reads above it; the value 1.0 is an assumption.
	DefaultDecisionSpread = 1.0

	// DefaultDwellAttention is the share of a forced wait the approver
	// spends reading. When an approval comes faster than the dwell, the
	// gate refuses it and shows the card again until the dwell has passed;
	// some people read in that time, some wait it out. One half is an
	// assumption.
	DefaultDwellAttention = 0.5

	// DefaultFalseDeny is the chance that an approver denies a benign
	// card. Seed 001's trusted card made language-model approvers refuse
	// 16% of harmless near misses, mostly through a placeholder artifact;
	// routine benign cards are no near misses. Two percent is an
	// assumption.
	DefaultFalseDeny = 0.02

	// DefaultCorrelation is the correlation between two approvers' errors
	// on one card. A card convincing enough to fool one careful reader
	// is likelier to fool the next: a harmful action displayed truthfully
	// can still look right (seed 001). Each approver's answer is drawn
	// from a normal shared by the card and one of their own, mixed in this
	// proportion (a Gaussian copula). One half is an assumption; 0 would
	// make a rule of two multiply independent misses, which overstates
	// it.
	DefaultCorrelation = 0.5

	// DefaultPracticeMissFactor is how much practice requests with
	// feedback scale the miss of a careful read (RestedMiss, grown by
	// vigilance): 0.21/0.45. Wolfe et al. (2007, "Low target prevalence is
	// a stubborn source of errors in visual search tasks", Journal of
	// Experimental Psychology: General 136(4):623-638, Experiment 2 as
	// reported at VSS 2007) found a low-prevalence miss rate of 0.45
	// without retraining and 0.21 with brief high-prevalence retraining
	// episodes with full feedback, about the 0.18 of high prevalence. The
	// figure is favourable: their retraining came in 40-trial bursts at
	// 50% prevalence, and practice requests are sparser (one card in
	// fifty by default) though each is followed by feedback.
	DefaultPracticeMissFactor = 0.21 / 0.45

	// DefaultConfirmOptions is how many values active confirmation offers
	// the approver to pick the effect's key value from (the recipient's
	// registrable domain, the amount), one of them right: an approver who
	// did not read the value picks it by chance 1 time in 4, and a wrong
	// pick shows the card again, read this time. Four is our choice; Rich
	// et al. (2008, "Why do we miss rare targets? Exploring the boundaries
	// of the low prevalence effect", Journal of Vision 8(15):15,
	// Experiment 4) found that four response alternatives, where two gave
	// elevated misses, removed the low-prevalence effect; we credit none
	// of that (pessimistic) beyond the forced read.
	DefaultConfirmOptions = 4

	// DefaultConfirmTime is what a pick adds to every decision, benign
	// cards included: three seconds, an assumption (one short word among
	// four, at the reading rates of Rayner et al. 2016).
	DefaultConfirmTime = 3 * time.Second
)

// With active confirmation the miss of a careful read does not grow over
// the shift: Bravo-Lillo et al. (2014, "Harder to Ignore? Revisiting
// Pop-Up Fatigue and Approaches to Prevent It", SOUPS 2014) found that
// without attractors habituation cut the share of people who noticed a
// changed field three-fold, while the two attractors that forced
// interaction with the field were resilient to habituation. The model
// therefore drops the vigilance growth under active confirmation
// (neutral: their habituation was repetition within a session, the
// nearest measured analogue of a shift).

// Approver is the model of a person deciding approval cards. Each
// approver works through their cards one at a time, first come first
// served.
//
// Deciding a card takes a time d drawn log-normally around a median that
// shrinks as the prompts reaching the approver grow (r is the number of
// cards that reached them in the trailing hour):
//
//	median(r) = FloorMedian + (UnloadedMedian - FloorMedian) / (1 + r/HalfRate)
//
// A malicious card is caught (denied) with probability
//
//	catch(d, t) = (1 - RestedMiss × v(t)) × (1 - exp(-d/ReadTau))
//	v(t)        = 1 + VigilanceGrowth × (1 - exp(-t/VigilanceTau))
//
// where t is the time on shift: a person who barely looks catches
// nothing, one who reads at leisure misses a little, and more so later in
// the shift. Load therefore lowers the catch through the time people
// spend, as seed 002 puts it: "when prompts are frequent, people approve
// without reading".
//
// A dwell D refuses an approval faster than D and shows the card again.
// An approver who would have approved after d < D spends D in all, of
// which DwellAttention × (D - d) more reading; the card is caught with
// catch(d + DwellAttention×(D-d), t) in all. A denial is never delayed.
//
// A benign card is denied with probability FalseDeny, whatever the time.
//
// Every approver is modelled alike, with their own load and time on
// shift. Their answers to one card are correlated (Correlation): with a
// rule of two, both approvers are fooled by one convincing card more often
// than two independent draws would say.
type Approver struct {
	RestedMiss      float64       `json:"rested_miss"`        // miss of a rested approver reading at leisure
	VigilanceGrowth float64       `json:"vigilance_growth"`   // growth of that miss over the shift, a share of itself
	VigilanceTau    time.Duration `json:"vigilance_tau_ns"`   // time constant of that growth
	ReadTau         time.Duration `json:"read_tau_ns"`        // time constant of reading a card
	UnloadedMedian  time.Duration `json:"unloaded_median_ns"` // median decision time when seldom asked
	FloorMedian     time.Duration `json:"floor_median_ns"`    // median decision time under any load
	HalfRate        float64       `json:"half_rate"`          // prompts per hour halving the median's excess over the floor
	DecisionSpread  float64       `json:"decision_spread"`    // standard deviation of log decision time
	DwellAttention  float64       `json:"dwell_attention"`    // share of a forced wait spent reading
	FalseDeny       float64       `json:"false_deny"`         // chance of denying a benign card
	Correlation     float64       `json:"correlation"`        // correlation of approvers' answers to one card

	PracticeMissFactor float64       `json:"practice_miss_factor"` // scale of the careful-read miss under practice requests
	ConfirmOptions     int           `json:"confirm_options"`      // values offered by active confirmation, one right
	ConfirmTime        time.Duration `json:"confirm_time_ns"`      // time a pick adds to every decision
}

// DefaultApprover returns the approver model with the documented
// constants.
func DefaultApprover() Approver {
	return Approver{
		RestedMiss:      DefaultRestedMiss,
		VigilanceGrowth: DefaultVigilanceGrowth,
		VigilanceTau:    DefaultVigilanceTau,
		ReadTau:         DefaultReadTau,
		UnloadedMedian:  DefaultUnloadedMedian,
		FloorMedian:     DefaultFloorMedian,
		HalfRate:        DefaultHalfRate,
		DecisionSpread:  DefaultDecisionSpread,
		DwellAttention:  DefaultDwellAttention,
		FalseDeny:       DefaultFalseDeny,
		Correlation:     DefaultCorrelation,

		PracticeMissFactor: DefaultPracticeMissFactor,
		ConfirmOptions:     DefaultConfirmOptions,
		ConfirmTime:        DefaultConfirmTime,
	}
}

// Bounds on the approver model, so that a simulation neither divides by
// zero nor draws decision times that overflow.
const (
	maxDecisionSpread = 3.0
	maxModelTime      = 24 * time.Hour
	maxHalfRate       = 1e6
	maxDecision       = 6 * time.Hour // a draw beyond is cut here
	maxConfirmOptions = 16
)

// Validate reports whether a is usable: probabilities in [0, 1] (the
// rested miss grown by vigilance too), times positive and at most a day,
// the floor median at most the unloaded one, and the other figures
// positive and bounded.
func (a Approver) Validate() error {
	probs := []struct {
		name string
		v    float64
	}{{"rested miss", a.RestedMiss}, {"dwell attention", a.DwellAttention}, {"false deny", a.FalseDeny}, {"correlation", a.Correlation},
		{"practice miss factor", a.PracticeMissFactor}}
	for _, p := range probs {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%w: approver: %s must be in [0, 1], got %v", ErrInvalid, p.name, p.v)
		}
	}
	switch {
	case !(a.VigilanceGrowth >= 0 && a.VigilanceGrowth <= 10):
		return fmt.Errorf("%w: approver: vigilance growth must be in [0, 10], got %v", ErrInvalid, a.VigilanceGrowth)
	case a.RestedMiss*(1+a.VigilanceGrowth) > 1:
		return fmt.Errorf("%w: approver: rested miss grown by vigilance exceeds 1", ErrInvalid)
	case !(a.HalfRate > 0 && a.HalfRate <= maxHalfRate):
		return fmt.Errorf("%w: approver: half rate must be in (0, %g] prompts per hour, got %v", ErrInvalid, float64(maxHalfRate), a.HalfRate)
	case !(a.DecisionSpread >= 0 && a.DecisionSpread <= maxDecisionSpread):
		return fmt.Errorf("%w: approver: decision spread must be in [0, %g], got %v", ErrInvalid, maxDecisionSpread, a.DecisionSpread)
	case a.ConfirmOptions < 2 || a.ConfirmOptions > maxConfirmOptions:
		return fmt.Errorf("%w: approver: confirm options must be between 2 and %d, got %d", ErrInvalid, maxConfirmOptions, a.ConfirmOptions)
	case a.ConfirmTime < 0 || a.ConfirmTime > MaxDwell:
		return fmt.Errorf("%w: approver: confirm time must be between 0 and %v, got %v", ErrInvalid, MaxDwell, a.ConfirmTime)
	}
	times := []struct {
		name string
		v    time.Duration
	}{{"vigilance tau", a.VigilanceTau}, {"read tau", a.ReadTau}, {"unloaded median", a.UnloadedMedian}, {"floor median", a.FloorMedian}}
	for _, t := range times {
		if t.v < time.Millisecond || t.v > maxModelTime {
			return fmt.Errorf("%w: approver: %s must be between 1ms and %v, got %v", ErrInvalid, t.name, maxModelTime, t.v)
		}
	}
	if a.FloorMedian > a.UnloadedMedian {
		return fmt.Errorf("%w: approver: floor median %v above unloaded median %v", ErrInvalid, a.FloorMedian, a.UnloadedMedian)
	}
	return nil
}

// Median returns the median decision time of an approver whom perHour
// cards reached in the trailing hour.
func (a Approver) Median(perHour float64) time.Duration {
	excess := float64(a.UnloadedMedian - a.FloorMedian)
	return a.FloorMedian + time.Duration(excess/(1+max(perHour, 0)/a.HalfRate))
}

// Catch returns the probability that an approver who spends spent on a
// malicious card, onShift into their shift, denies it, with no aid.
func (a Approver) Catch(spent, onShift time.Duration) float64 {
	return a.catch(spent, onShift, aids{})
}

// aids are the controls that change how a card is read: practice
// requests and active confirmation.
type aids struct {
	practice, confirm bool
}

// catch is Catch under the aids. Practice scales the careful-read miss by
// PracticeMissFactor. Active confirmation drops its growth over the shift
// and forces the key value to be read: an approver who had not read it
// picks right by chance (1/ConfirmOptions) and approves; otherwise the
// wrong pick shows the card again and the value is read.
func (a Approver) catch(spent, onShift time.Duration, x aids) float64 {
	v := 1 + a.VigilanceGrowth*(1-math.Exp(-onShift.Seconds()/a.VigilanceTau.Seconds()))
	if x.confirm {
		v = 1
	}
	miss := a.RestedMiss * v
	if x.practice {
		miss *= a.PracticeMissFactor
	}
	read := 1 - math.Exp(-max(spent, 0).Seconds()/a.ReadTau.Seconds())
	if x.confirm {
		read += (1 - read) * (1 - 1/float64(a.ConfirmOptions))
	}
	return max(0, 1-miss) * read
}

// decision is one approver's answer to one card.
type decision struct {
	approve bool
	spent   time.Duration // time from taking the card to answering
}

// drawTime turns a standard normal draw z into a decision time around the
// median for perHour, cut at maxDecision.
func (a Approver) drawTime(perHour, z float64) time.Duration {
	d := float64(a.Median(perHour)) * math.Exp(a.DecisionSpread*z)
	if !(d < float64(maxDecision)) {
		return maxDecision
	}
	return max(time.Duration(d), 0)
}

// uniform turns the card's shared normal draw and the approver's own
// into the approver's uniform draw for the card, correlated with other
// approvers' by Correlation.
func (a Approver) uniform(card, own float64) float64 {
	z := math.Sqrt(a.Correlation)*card + math.Sqrt(1-a.Correlation)*own
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// decide answers a card, given the decision time d the approver would
// take, a uniform draw u in [0, 1) and the dwell. One draw u serves the
// first look and the second, so that a longer dwell can only turn an
// approval of a malicious card into a denial, never the reverse.
func (a Approver) decide(malicious bool, onShift, d time.Duration, u float64, dwell time.Duration, x aids) decision {
	extra := time.Duration(0)
	if x.confirm {
		extra = a.ConfirmTime // the pick, on every card
	}
	if !malicious {
		if u < a.FalseDeny {
			return decision{approve: false, spent: d + extra}
		}
		return decision{approve: true, spent: max(d+extra, dwell)}
	}
	if u < a.catch(d, onShift, x) {
		return decision{approve: false, spent: d + extra}
	}
	if d+extra >= dwell {
		return decision{approve: true, spent: d + extra}
	}
	// Refused as too fast and shown again: the dwell passes, part of it
	// spent reading.
	read := d + time.Duration(a.DwellAttention*float64(dwell-d-extra))
	return decision{approve: u >= a.catch(read, onShift, x), spent: dwell}
}
