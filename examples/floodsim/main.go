// Command floodsim simulates an attacker flooding a team's approvers, so an
// operator can try their own flood limits before a shift does.
//
//	floodsim [-runs N] [-seed S] [-each | -table] [-json] [scenario,
//	         attacker, approver and control flags]
//
// It runs N shifts of the scenario (package flood/sim) with every control
// off (the naive queue: every request is a card for one approver) and with
// the controls the flags set on, and prints, for each, how often at least
// one malicious call executed (with its 95% Wilson interval) and what the
// controls cost benign work. -each adds a row for each control switched
// off while the others stay on. -table prints the sensitivity table
// instead: one or two approvers, rested miss 0.02, 0.15 and 0.3,
// correlation 0.5 and 0.8, a naive, a disguised and a disguised attacker
// spread over 4 agents, each with the controls off and on, as markdown.
// Every configuration meets the same requests at the same times, and the
// same flags and seed always print the same figures.
//
// The defaults are the documented ones: the scenario and the approver
// model of package flood/sim, flood's default limits with the target
// limits and the first-contact rule (a second approver for a first
// contact), a 3 s dwell, one approver (the documented setup for an
// external call), practice requests at one card in fifty and active
// confirmation. Rates are N/DURATION ("10/10m"), lockouts AFTER/DURATION
// ("3/15m"); "off" turns one off. A pending cap of 0 is no cap.
//
// The exit status is 0 on success and 2 for a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/flood/sim"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options is everything the flags set.
type options struct {
	runs     int
	seed     uint64
	each     bool
	table    bool
	json     bool
	scenario sim.Scenario
	on       sim.Controls
}

// parseFlags reads args into options, starting from the documented
// defaults.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{runs: 1000, seed: 1, scenario: sim.DefaultScenario(), on: sim.AllControls()}
	o.on.Limits = flood.Limits{
		Session: flood.DefaultSessionRate, Agent: flood.DefaultAgentRate, User: flood.DefaultUserRate,
		ApproverInflow: flood.DefaultApproverInflow, SessionLockout: flood.DefaultSessionLockout,
		AgentLockout: flood.DefaultAgentLockout, UserLockout: flood.DefaultUserLockout,
		PendingPerSession: flood.DefaultPendingPerSession, PendingPerUser: flood.DefaultPendingPerUser,
		Target: flood.DefaultTargetRate, TargetLockout: flood.DefaultTargetLockout,
		FirstContact: flood.DefaultFirstContactRate, FirstContactTarget: flood.DefaultFirstContactTargetRate,
		FirstContactLockout: flood.DefaultFirstContactLockout,
	}
	fs := flag.NewFlagSet("floodsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.runs, "runs", o.runs, fmt.Sprintf("shifts to simulate per configuration (1 to %d)", sim.MaxRuns))
	fs.Uint64Var(&o.seed, "seed", o.seed, "seed of the random streams")
	fs.BoolVar(&o.each, "each", false, "also run the controls with each one off")
	fs.BoolVar(&o.table, "table", false, "print the sensitivity table (markdown) instead")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")

	sc := &o.scenario
	fs.DurationVar(&sc.Shift, "shift", sc.Shift, "length of the shift")
	fs.Float64Var(&sc.BenignRate, "benign-rate", sc.BenignRate, "benign approval requests per hour")
	fs.IntVar(&sc.BenignUsers, "benign-users", sc.BenignUsers, "users sending benign requests")
	fs.DurationVar(&sc.TTL, "ttl", sc.TTL, "how long a card waits before it expires")
	fs.Float64Var(&sc.BenignFirstContact, "benign-first-contact", sc.BenignFirstContact, "share of benign requests to a target the operator's history has not seen")
	fs.IntVar(&sc.KnownTargets, "known-targets", sc.KnownTargets, "targets the operator's history holds")

	at := &sc.Attack
	fs.Float64Var(&at.Rate, "attack-rate", at.Rate, "malicious requests per hour (0: no attacker)")
	fs.IntVar(&at.Burst, "burst", at.Burst, "malicious requests per burst")
	fs.BoolVar(&at.Disguise, "disguise", at.Disguise, "make every malicious request differ, so none merges")
	fs.IntVar(&at.Spread, "spread", at.Spread, "requesters the attacker rotates over")
	fs.Var((*scopeFlag)(&at.Scope), "spread-scope", "what differs between the attacker's requesters: session, agent or user")
	fs.IntVar(&at.Targets, "attack-targets", at.Targets, "targets (mail domains) the attacker rotates over")

	ap := &sc.Approver
	fs.Float64Var(&ap.RestedMiss, "rested-miss", ap.RestedMiss, "approver: miss of a rested, careful read")
	fs.Float64Var(&ap.VigilanceGrowth, "vigilance-growth", ap.VigilanceGrowth, "approver: growth of that miss over the shift")
	fs.DurationVar(&ap.VigilanceTau, "vigilance-tau", ap.VigilanceTau, "approver: time constant of that growth")
	fs.DurationVar(&ap.ReadTau, "read-tau", ap.ReadTau, "approver: time constant of reading a card")
	fs.DurationVar(&ap.UnloadedMedian, "unloaded-median", ap.UnloadedMedian, "approver: median decision time when seldom asked")
	fs.DurationVar(&ap.FloorMedian, "floor-median", ap.FloorMedian, "approver: median decision time under any load")
	fs.Float64Var(&ap.HalfRate, "half-rate", ap.HalfRate, "approver: prompts per hour halving the median's excess over the floor")
	fs.Float64Var(&ap.DecisionSpread, "decision-spread", ap.DecisionSpread, "approver: standard deviation of log decision time")
	fs.Float64Var(&ap.DwellAttention, "dwell-attention", ap.DwellAttention, "approver: share of a forced wait spent reading")
	fs.Float64Var(&ap.FalseDeny, "false-deny", ap.FalseDeny, "approver: chance of denying a benign card")
	fs.Float64Var(&ap.Correlation, "correlation", ap.Correlation, "approver: correlation of two approvers' answers to one card")
	fs.Float64Var(&ap.PracticeMissFactor, "practice-miss-factor", ap.PracticeMissFactor, "approver: scale of the careful-read miss under practice requests")
	fs.IntVar(&ap.ConfirmOptions, "confirm-options", ap.ConfirmOptions, "approver: values active confirmation offers, one right")
	fs.DurationVar(&ap.ConfirmTime, "confirm-time", ap.ConfirmTime, "approver: time a confirmation pick adds to each decision")

	on := &o.on
	fs.DurationVar(&on.Dwell, "dwell", on.Dwell, "controls on: least time from showing a card to accepting its approval (0: off)")
	fs.IntVar(&on.Approvals, "approvals", on.Approvals, "controls on: distinct approvers who must each approve (1: one)")
	noFlood := fs.Bool("no-flood", false, "controls on: leave package flood's limits, caps and merging off")
	noTargets := fs.Bool("no-targets", false, "controls on: leave the target limits and the first-contact rule off")
	fs.IntVar(&on.FirstContactApprovals, "first-contact-approvals", on.FirstContactApprovals, "controls on: approvers a first contact needs (0: as -approvals)")
	fs.Float64Var(&on.Practice, "practice", on.Practice, "controls on: share of practice requests (0: off)")
	fs.BoolVar(&on.Confirm, "confirm", on.Confirm, "controls on: active confirmation (-confirm=false: off)")
	l := &on.Limits
	fs.Var((*rateFlag)(&l.Session), "session-rate", "controls on: requests per session, N/DURATION or off")
	fs.Var((*rateFlag)(&l.Agent), "agent-rate", "controls on: requests per agent of a user, N/DURATION or off")
	fs.Var((*rateFlag)(&l.User), "user-rate", "controls on: requests per user, N/DURATION or off")
	fs.Var((*rateFlag)(&l.ApproverInflow), "approver-inflow", "controls on: prompts reaching one approver, N/DURATION or off")
	fs.Var((*lockoutFlag)(&l.SessionLockout), "session-lockout", "controls on: denials in a row locking a session, AFTER/DURATION or off")
	fs.Var((*lockoutFlag)(&l.AgentLockout), "agent-lockout", "controls on: denials in a row locking an agent, AFTER/DURATION or off")
	fs.Var((*lockoutFlag)(&l.UserLockout), "user-lockout", "controls on: denials in a row locking a user, AFTER/DURATION or off")
	fs.IntVar(&l.PendingPerSession, "pending-per-session", l.PendingPerSession, "controls on: live pending cards per session (0: no cap)")
	fs.IntVar(&l.PendingPerUser, "pending-per-user", l.PendingPerUser, "controls on: live pending cards per user (0: no cap)")
	fs.Var((*rateFlag)(&l.Target), "target-rate", "controls on: requests per user and target, N/DURATION or off")
	fs.Var((*lockoutFlag)(&l.TargetLockout), "target-lockout", "controls on: denials in a row locking a known target, AFTER/DURATION or off")
	fs.Var((*rateFlag)(&l.FirstContact), "first-contact-rate", "controls on: first-contact requests per user, N/DURATION or off")
	fs.Var((*rateFlag)(&l.FirstContactTarget), "first-contact-target-rate", "controls on: requests per user to one new target, N/DURATION or off")
	fs.Var((*lockoutFlag)(&l.FirstContactLockout), "first-contact-lockout", "controls on: denials in a row locking a new target, AFTER/DURATION or off")

	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	on.Flood = !*noFlood
	on.Targets = !*noTargets
	if o.each && o.table {
		return o, errors.New("-each and -table do not go together")
	}
	for _, c := range []*int{&l.PendingPerSession, &l.PendingPerUser} {
		if *c <= 0 {
			*c = -1 // flood reads 0 as its default and below 0 as no cap
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintln(stderr, "floodsim:", err)
		return exitUsage
	}
	if o.table {
		return runTable(ctx, o, stdout, stderr)
	}
	configs := []sim.Named{{Name: "off (naive queue)", Controls: sim.NaiveQueue()}, {Name: "all on", Controls: o.on}}
	if o.each {
		configs = sim.Ablation(o.on)
	}
	// Validate every configuration before the first long run.
	for _, c := range configs {
		if err := (sim.Config{Scenario: o.scenario, Controls: c.Controls, Runs: o.runs, Seed: o.seed}).Validate(); err != nil {
			fmt.Fprintf(stderr, "floodsim: %s: %v\n", c.Name, err)
			return exitUsage
		}
	}
	rows, err := sim.Compare(ctx, o.scenario, configs, o.runs, o.seed)
	if err != nil {
		fmt.Fprintln(stderr, "floodsim:", err)
		return exitError
	}
	if o.json {
		err = printJSON(stdout, o, rows)
	} else {
		err = printTable(stdout, o, rows)
	}
	if err != nil {
		fmt.Fprintln(stderr, "floodsim:", err)
		return exitError
	}
	return exitOK
}

// printTable prints the scenario, the controls and one row per
// configuration.
func printTable(w io.Writer, o options, rows []sim.Row) error {
	sc, at := o.scenario, o.scenario.Attack
	kind := "identical"
	if at.Disguise {
		kind = "disguised"
	}
	fmt.Fprintf(w, "%d shifts of %v, seed %d\n", o.runs, sc.Shift, o.seed)
	fmt.Fprintf(w, "benign: %g requests/h from %d users; attacker: %g requests/h in bursts of %d, %s, over %d %s(s)\n",
		sc.BenignRate, sc.BenignUsers, at.Rate, at.Burst, kind, at.Spread, at.Scope)
	fmt.Fprintf(w, "controls on: %s\n\n", describe(o.on))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tattack success [95% CI]\tmalicious cards/shift\tbenign done [95% CI]\tbenign latency median s [95% CI]\tp90 s\tprompts/approver-h\tmedian decision s")
	for _, r := range rows {
		x := r.Result
		fmt.Fprintf(tw, "%s\t%.3f [%.3f, %.3f]\t%.1f\t%.1f%% [%.1f, %.1f]\t%.0f [%.0f, %.0f]\t%.0f\t%.1f\t%.1f\n", r.Name,
			x.AttackSuccess.P, x.AttackSuccess.Lo, x.AttackSuccess.Hi, x.MaliciousCards.Mean,
			100*x.BenignDone.Mean, 100*x.BenignDone.Lo, 100*min(x.BenignDone.Hi, 1),
			x.BenignMedianLatency.Mean, x.BenignMedianLatency.Lo, x.BenignMedianLatency.Hi,
			x.BenignP90Latency.Mean, x.PromptsPerApproverHour.Mean, x.MedianDecision.Mean)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	header := false
	for _, r := range rows {
		if len(r.Result.MaliciousRefusedBy)+len(r.Result.BenignRefusedBy) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nrefused by flood control, per shift (a refused benign request is retried):")
			header = true
		}
		fmt.Fprintf(w, "  %s: malicious %s; benign %s\n", r.Name, tally(r.Result.MaliciousRefusedBy), tally(r.Result.BenignRefusedBy))
	}
	_, err := fmt.Fprintln(w, "\nattack success: share of shifts in which at least one malicious call executed.")
	return err
}

// tally prints a refusal breakdown, largest first.
func tally(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		prec := 1
		if m[k] < 0.1 {
			prec = 3 // a rare refusal still shows
		}
		parts[i] = fmt.Sprintf("%s %.*f", k, prec, m[k])
	}
	return strings.Join(parts, ", ")
}

// describe says in words which controls c turns on.
func describe(c sim.Controls) string {
	var parts []string
	if c.Flood {
		l := c.Limits
		parts = append(parts, fmt.Sprintf("flood limits (rates: session %s, agent %s, user %s, approver inflow %s; lockouts: session %s, agent %s, user %s; pending caps: %s per session, %s per user; merging)",
			rateString(l.Session), rateString(l.Agent), rateString(l.User), rateString(l.ApproverInflow),
			lockoutString(l.SessionLockout), lockoutString(l.AgentLockout), lockoutString(l.UserLockout),
			capString(l.PendingPerSession), capString(l.PendingPerUser)))
	}
	if c.Flood && c.Targets {
		l := c.Limits
		parts = append(parts, fmt.Sprintf("target limits (rate %s, lockout %s; first contact: rate %s per user, %s per target, lockout %s, %d approvers)",
			rateString(l.Target), lockoutString(l.TargetLockout), rateString(l.FirstContact),
			rateString(l.FirstContactTarget), lockoutString(l.FirstContactLockout), max(c.FirstContactApprovals, c.Approvals)))
	}
	if c.Dwell > 0 {
		parts = append(parts, fmt.Sprintf("dwell %v", c.Dwell))
	}
	if c.Approvals > 1 {
		parts = append(parts, fmt.Sprintf("rule of %d", c.Approvals))
	}
	if c.Practice > 0 {
		parts = append(parts, fmt.Sprintf("practice requests %g", c.Practice))
	}
	if c.Confirm {
		parts = append(parts, "active confirmation")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func capString(n int) string {
	if n <= 0 {
		return "no cap"
	}
	return fmt.Sprint(n)
}

// output is the JSON document -json prints.
type output struct {
	Runs     int            `json:"runs"`
	Seed     uint64         `json:"seed"`
	Scenario sim.Scenario   `json:"scenario"`
	On       controlsOutput `json:"controls_on"`
	Rows     []rowOutput    `json:"rows"`
}

type controlsOutput struct {
	Flood                 bool          `json:"flood"`
	Limits                *limitsOutput `json:"limits,omitempty"`
	Dwell                 string        `json:"dwell"`
	Approvals             int           `json:"approvals"`
	Targets               bool          `json:"targets"`
	FirstContactApprovals int           `json:"first_contact_approvals"`
	Practice              float64       `json:"practice"`
	Confirm               bool          `json:"confirm"`
}

type limitsOutput struct {
	SessionRate       string `json:"session_rate"`
	AgentRate         string `json:"agent_rate"`
	UserRate          string `json:"user_rate"`
	ApproverInflow    string `json:"approver_inflow"`
	SessionLockout    string `json:"session_lockout"`
	AgentLockout      string `json:"agent_lockout"`
	UserLockout       string `json:"user_lockout"`
	PendingPerSession int    `json:"pending_per_session"`
	PendingPerUser    int    `json:"pending_per_user"`

	TargetRate             string `json:"target_rate"`
	TargetLockout          string `json:"target_lockout"`
	FirstContactRate       string `json:"first_contact_rate"`
	FirstContactTargetRate string `json:"first_contact_target_rate"`
	FirstContactLockout    string `json:"first_contact_lockout"`
}

type rowOutput struct {
	Name     string         `json:"name"`
	Controls controlsOutput `json:"controls"`
	Result   sim.Result     `json:"result"`
}

func controlsJSON(c sim.Controls) controlsOutput {
	out := controlsOutput{Flood: c.Flood, Dwell: c.Dwell.String(), Approvals: c.Approvals,
		Targets: c.Targets, FirstContactApprovals: c.FirstContactApprovals, Practice: c.Practice, Confirm: c.Confirm}
	if c.Flood {
		l := c.Limits
		out.Limits = &limitsOutput{
			SessionRate: rateString(l.Session), AgentRate: rateString(l.Agent), UserRate: rateString(l.User),
			ApproverInflow: rateString(l.ApproverInflow), SessionLockout: lockoutString(l.SessionLockout),
			AgentLockout: lockoutString(l.AgentLockout), UserLockout: lockoutString(l.UserLockout),
			PendingPerSession: l.PendingPerSession, PendingPerUser: l.PendingPerUser,
			TargetRate: rateString(l.Target), TargetLockout: lockoutString(l.TargetLockout),
			FirstContactRate: rateString(l.FirstContact), FirstContactTargetRate: rateString(l.FirstContactTarget),
			FirstContactLockout: lockoutString(l.FirstContactLockout),
		}
	}
	return out
}

func printJSON(w io.Writer, o options, rows []sim.Row) error {
	out := output{Runs: o.runs, Seed: o.seed, Scenario: o.scenario, On: controlsJSON(o.on)}
	for _, r := range rows {
		out.Rows = append(out.Rows, rowOutput{Name: r.Name, Controls: controlsJSON(r.Controls), Result: r.Result})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// durationString prints a duration without trailing zero units: 10m, 1h,
// 1h30m.
func durationString(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
