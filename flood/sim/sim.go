package sim

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Config is one configuration to simulate: a scenario, the controls in
// force, and how many shifts to run from which seed.
type Config struct {
	Scenario Scenario
	Controls Controls
	Runs     int    // shifts to simulate, 1 to MaxRuns
	Seed     uint64 // run i uses the PCG streams (Seed, i<<8 | stream)
}

// Validate reports whether c is usable and within the work bounds.
func (c Config) Validate() error {
	if c.Runs < 1 || c.Runs > MaxRuns {
		return fmt.Errorf("%w: runs must be between 1 and %d, got %d", ErrInvalid, MaxRuns, c.Runs)
	}
	if err := c.Scenario.Validate(); err != nil {
		return err
	}
	if err := c.Controls.Validate(); err != nil {
		return err
	}
	if w := float64(c.Runs) * c.Scenario.expectedRequests(); w > MaxWork {
		return fmt.Errorf("%w: %d runs of %.0f requests each is more than %d requests in all",
			ErrInvalid, c.Runs, c.Scenario.expectedRequests(), MaxWork)
	}
	return nil
}

// Result is what a configuration did over its runs. Per-run figures are
// means over runs with 95% intervals ([Estimate]); the attack's success
// is a share of runs with its Wilson interval ([Proportion]).
type Result struct {
	Runs int    `json:"runs"`
	Seed uint64 `json:"seed"`

	// AttackSuccess is the share of runs in which at least one malicious
	// call was approved by every approver it needed, and so executed.
	AttackSuccess Proportion `json:"attack_success"`
	// MaliciousExecuted is malicious calls executed per run.
	MaliciousExecuted Estimate `json:"malicious_executed"`
	// MaliciousSent is malicious requests the attacker sent per run.
	MaliciousSent Estimate `json:"malicious_sent"`
	// MaliciousCards is cards shown for malicious requests per run
	// (copies merged into a pending card count once).
	MaliciousCards Estimate `json:"malicious_cards"`
	// MaliciousRefused is malicious requests refused by flood control
	// (rates, lockouts, pending caps) per run.
	MaliciousRefused Estimate `json:"malicious_refused"`
	// MaliciousRefusedBy splits MaliciousRefused by the limit that
	// refused ("rate/session", "lockout/agent", "pending cap", ...): means
	// per run.
	MaliciousRefusedBy map[string]float64 `json:"malicious_refused_by,omitempty"`
	// MaliciousMerged is malicious requests merged into a pending card
	// per run.
	MaliciousMerged Estimate `json:"malicious_merged"`

	// BenignDone is the share of benign requests executed before the end
	// of the run (approved by every approver), per run: the benign
	// throughput. The rest were denied by mistake, expired waiting, or
	// kept being refused by flood control until the shift ended.
	BenignDone Estimate `json:"benign_done"`
	// BenignMedianLatency and BenignP90Latency are each run's median and
	// 90th percentile, in seconds, of the time from a benign request's
	// first proposal to its execution, retries after refusals included.
	BenignMedianLatency Estimate `json:"benign_median_latency_s"`
	BenignP90Latency    Estimate `json:"benign_p90_latency_s"`
	// BenignRefusals is benign proposals flood control refused per run
	// (each retry counts).
	BenignRefusals Estimate `json:"benign_refusals"`
	// BenignRefusedBy splits BenignRefusals by the limit that refused.
	BenignRefusedBy map[string]float64 `json:"benign_refused_by,omitempty"`

	// PromptsPerApproverHour is cards that reached each approver per hour
	// of shift: seed 002's approvals per reviewer per hour, counting every
	// card shown.
	PromptsPerApproverHour Estimate `json:"prompts_per_approver_hour"`
	// MedianDecision is each run's median time an approver spent on a
	// card, in seconds, dwell included.
	MedianDecision Estimate `json:"median_decision_s"`

	// PracticeCards is practice cards placed per run.
	PracticeCards Estimate `json:"practice_cards"`
	// PracticeCatch is the share of approvers' decisions on practice
	// cards that denied them, over every run: the catch rate a gate with
	// practice requests would measure and show per approver.
	PracticeCatch Proportion `json:"practice_catch"`
	// MaliciousCatch is the share of approvers' decisions on malicious
	// cards that denied them, over every run: the true catch rate, which
	// PracticeCatch estimates.
	MaliciousCatch Proportion `json:"malicious_catch"`
}

// summary is one run reduced to the figures a Result averages.
type summary struct {
	succeeded                                             bool
	executed, sent, cards, refused, merged                float64
	done, median, p90, benignRefusals, prompts, decisions float64
	maliciousBy, benignBy                                 map[string]int
	practice                                              float64
	practiceDecided, practiceCaught                       int
	maliciousDecided, maliciousCaught                     int
}

func summarize(o outcome) summary {
	done := math.NaN()
	if o.benign > 0 {
		done = float64(o.benignDone) / float64(o.benign)
	}
	return summary{
		succeeded: o.maliciousExecuted > 0,
		executed:  float64(o.maliciousExecuted), sent: float64(o.malicious),
		cards: float64(o.maliciousCards), refused: float64(o.maliciousRefused), merged: float64(o.maliciousMerged),
		done: done, median: quantile(o.latencies, 0.5), p90: quantile(o.latencies, 0.9),
		benignRefusals: float64(o.benignRefused),
		prompts:        float64(o.prompts) / o.approverHours,
		decisions:      quantile(o.decisions, 0.5),
		maliciousBy:    o.maliciousRefusedBy, benignBy: o.benignRefusedBy,
		practice:        float64(o.practiceCards),
		practiceDecided: o.practiceDecided, practiceCaught: o.practiceCaught,
		maliciousDecided: o.maliciousDecided, maliciousCaught: o.maliciousCaught,
	}
}

// Run simulates c.Runs shifts of c and returns what they did. It is
// deterministic: the same Config gives the same Result, whatever the
// number of CPUs, since run i draws from its own streams and the runs are
// summed in order. It stops early with ctx's error.
func Run(ctx context.Context, c Config) (Result, error) {
	return run(ctx, c, runtime.GOMAXPROCS(0))
}

// run is Run on at most workers goroutines.
func run(ctx context.Context, c Config, workers int) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	sums := make([]summary, c.Runs)
	errs := make([]error, c.Runs)
	workers = max(min(workers, c.Runs), 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < c.Runs; i += workers {
				o, err := runShift(ctx, c.Scenario, c.Controls, c.Seed, i)
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				sums[i] = summarize(o)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Result{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return aggregate(c, sums), nil
}

func aggregate(c Config, sums []summary) Result {
	col := func(f func(summary) float64) Estimate {
		xs := make([]float64, len(sums))
		for i, s := range sums {
			xs[i] = f(s)
		}
		return NewEstimate(xs)
	}
	wins := 0
	var pd, pc, md, mc int
	for _, s := range sums {
		if s.succeeded {
			wins++
		}
		pd, pc = pd+s.practiceDecided, pc+s.practiceCaught
		md, mc = md+s.maliciousDecided, mc+s.maliciousCaught
	}
	perRun := func(by func(summary) map[string]int) map[string]float64 {
		var m map[string]float64
		for _, s := range sums {
			for k, v := range by(s) {
				if m == nil {
					m = map[string]float64{}
				}
				m[k] += float64(v)
			}
		}
		for k := range m {
			m[k] /= float64(len(sums))
		}
		return m
	}
	return Result{
		Runs: c.Runs, Seed: c.Seed,
		AttackSuccess:          NewProportion(wins, len(sums)),
		MaliciousExecuted:      col(func(s summary) float64 { return s.executed }),
		MaliciousSent:          col(func(s summary) float64 { return s.sent }),
		MaliciousCards:         col(func(s summary) float64 { return s.cards }),
		MaliciousRefused:       col(func(s summary) float64 { return s.refused }),
		MaliciousRefusedBy:     perRun(func(s summary) map[string]int { return s.maliciousBy }),
		MaliciousMerged:        col(func(s summary) float64 { return s.merged }),
		BenignDone:             col(func(s summary) float64 { return s.done }),
		BenignMedianLatency:    col(func(s summary) float64 { return s.median }),
		BenignP90Latency:       col(func(s summary) float64 { return s.p90 }),
		BenignRefusals:         col(func(s summary) float64 { return s.benignRefusals }),
		BenignRefusedBy:        perRun(func(s summary) map[string]int { return s.benignBy }),
		PromptsPerApproverHour: col(func(s summary) float64 { return s.prompts }),
		MedianDecision:         col(func(s summary) float64 { return s.decisions }),
		PracticeCards:          col(func(s summary) float64 { return s.practice }),
		PracticeCatch:          NewProportion(pc, pd),
		MaliciousCatch:         NewProportion(mc, md),
	}
}

// Row is one configuration of a [Compare] and its result.
type Row struct {
	Name     string   `json:"name"`
	Controls Controls `json:"controls"`
	Result   Result   `json:"result"`
}

// Compare runs each configuration on the same scenario, runs and seed, so
// every configuration meets the same requests at the same times.
func Compare(ctx context.Context, sc Scenario, configs []Named, runs int, seed uint64) ([]Row, error) {
	rows := make([]Row, 0, len(configs))
	for _, n := range configs {
		r, err := Run(ctx, Config{Scenario: sc, Controls: n.Controls, Runs: runs, Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		rows = append(rows, Row{Name: n.Name, Controls: n.Controls, Result: r})
	}
	return rows, nil
}
