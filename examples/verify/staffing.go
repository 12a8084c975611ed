package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/staffing"
	"github.com/agentstepup/asu/staffing/fromaudit"
)

// Where a figure of the load came from.
const (
	fromDefault = "default" // the worked example
	fromAudit   = "audit"   // observed in the --audit file
	fromFlag    = "flag"    // given on the command line
)

// staffingReport is the --json output of `verify staffing`.
type staffingReport struct {
	Plan staffing.Plan `json:"plan"`
	// Sources says where each figure of plan.load came from, keyed by its
	// JSON name: "default", "audit" or "flag".
	Sources map[string]string `json:"sources"`
	// Audit is what the --audit file showed, when one was given.
	Audit *auditObserved `json:"audit,omitempty"`
}

type auditObserved struct {
	File     string            `json:"file"`
	Observed staffing.Observed `json:"observed"`
}

// loadFlags names the flag of each figure of a staffing.Load, by the
// figure's JSON name.
var loadFlags = []struct{ flag, field, goField string }{
	{"tasks", staffing.FieldTasksPerDay, "TasksPerDay"},
	{"share", staffing.FieldApprovalShare, "ApprovalShare"},
	{"per-task", staffing.FieldApprovalsPerTask, "ApprovalsPerTask"},
	{"peak", staffing.FieldPeakFactor, "PeakFactor"},
	{"review", staffing.FieldReviewTime, "ReviewTime"},
	{"utilization", "target_utilization", "Utilization"},
	{"wait", staffing.FieldMedianWait, "MedianWait"},
}

func runStaffing(args []string, stdout io.Writer) (int, error) {
	def := staffing.WorkedExample()
	fs := flag.NewFlagSet("staffing", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	auditFile := fs.String("audit", "", "an exported audit chain to read the load from (flags override what it shows)")
	var l staffing.Load
	fs.Float64Var(&l.TasksPerDay, "tasks", def.TasksPerDay, "agent tasks per day")
	fs.Float64Var(&l.ApprovalShare, "share", def.ApprovalShare, "share of tasks needing approval, from 0 to 1")
	fs.Float64Var(&l.ApprovalsPerTask, "per-task", def.ApprovalsPerTask, "approvals per task that needs any")
	fs.Float64Var(&l.PeakFactor, "peak", def.PeakFactor, "busiest hour's approvals over the mean hour's")
	fs.DurationVar(&l.ReviewTime, "review", def.ReviewTime, "real review time of one approval")
	fs.Float64Var(&l.Utilization, "utilization", def.Utilization, "target share of reviewers' time spent reviewing, in (0, 1]")
	fs.DurationVar(&l.MedianWait, "wait", def.MedianWait, "median wait for a decision")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	if err := fs.Parse(args); err != nil {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: staffing takes no FILE (an audit chain goes with --audit)", errUsage)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	rep := staffingReport{Sources: map[string]string{}}
	for _, f := range loadFlags {
		rep.Sources[f.field] = fromDefault
	}
	load := def
	if *auditFile != "" {
		o, err := observeFile(*auditFile)
		if err != nil {
			return 0, err
		}
		rep.Audit = &auditObserved{File: *auditFile, Observed: o}
		var set []string
		load, set = o.Apply(def)
		for _, field := range set {
			rep.Sources[field] = fromAudit
		}
	}
	// Flags override both: copy each given figure from l.
	for _, f := range loadFlags {
		if !given[f.flag] {
			continue
		}
		rep.Sources[f.field] = fromFlag
		switch f.field {
		case staffing.FieldTasksPerDay:
			load.TasksPerDay = l.TasksPerDay
		case staffing.FieldApprovalShare:
			load.ApprovalShare = l.ApprovalShare
		case staffing.FieldApprovalsPerTask:
			load.ApprovalsPerTask = l.ApprovalsPerTask
		case staffing.FieldPeakFactor:
			load.PeakFactor = l.PeakFactor
		case staffing.FieldReviewTime:
			load.ReviewTime = l.ReviewTime
		case staffing.FieldMedianWait:
			load.MedianWait = l.MedianWait
		default:
			load.Utilization = l.Utilization
		}
	}
	plan, err := staffing.Size(load)
	if err != nil {
		return 0, loadProblem(err, rep.Sources)
	}
	rep.Plan = plan
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 0, err
		}
		return exitValid, nil
	}
	printPlan(stdout, rep)
	return exitValid, nil
}

// observeFile reads an exported audit chain and observes the load in it.
// The chain is read, not verified: `verify audit` does that.
func observeFile(file string) (staffing.Observed, error) {
	f, err := openLimited(file, "audit chain", maxStaffingAudit)
	if err != nil {
		return staffing.Observed{}, err
	}
	defer f.Close()
	records, err := audit.ReadChain(&limitedReader{r: f, left: maxStaffingAudit, over: tooLarge(file, "audit chain", maxStaffingAudit)})
	if err != nil {
		return staffing.Observed{}, err
	}
	o, err := fromaudit.Observe(records)
	if errors.Is(err, fromaudit.ErrNoRecords) {
		return staffing.Observed{}, fmt.Errorf("%s holds no audit records to plan from", quoted(file))
	}
	return o, err
}

// loadProblem rewords a staffing.LoadError by the flag that sets the
// figure and where the figure came from.
func loadProblem(err error, sources map[string]string) error {
	var le *staffing.LoadError
	if !errors.As(err, &le) {
		return err
	}
	for _, f := range loadFlags {
		if f.goField == le.Field {
			return fmt.Errorf("%w: --%s (%s, from %s) is %s; it must be %s", errUsage, f.flag, f.field,
				sources[f.field], le.Value, le.Want)
		}
	}
	return err
}

func printPlan(w io.Writer, rep staffingReport) {
	l, p := rep.Plan.Load, rep.Plan
	if a := rep.Audit; a != nil {
		o := a.Observed
		days := num(o.Days) + " days"
		if days == "1 days" {
			days = "1 day"
		}
		fmt.Fprintf(w, "observed in %s (read, not verified): %d records over %s, %d tasks (%d asked for approval), %d requests, %d decisions, busiest hour %d requests, median decision %s\n",
			printable(a.File), o.Records, days, o.Tasks, o.TasksWithApproval, o.Requests, o.Decisions, o.PeakHourRequests,
			o.MedianDecision.Round(time.Millisecond))
	}
	fmt.Fprintln(w, "load:")
	in := func(label, value, field string) {
		fmt.Fprintf(w, "  %-28s %-12s %s\n", label, value, rep.Sources[field])
	}
	in("tasks per day", num(l.TasksPerDay), staffing.FieldTasksPerDay)
	in("share needing approval", num(100*l.ApprovalShare)+"%", staffing.FieldApprovalShare)
	in("approvals per task", num(l.ApprovalsPerTask), staffing.FieldApprovalsPerTask)
	in("peak factor", num(l.PeakFactor), staffing.FieldPeakFactor)
	in("review time", l.ReviewTime.String(), staffing.FieldReviewTime)
	in("target utilization", num(100*l.Utilization)+"%", "target_utilization")
	in("median wait", l.MedianWait.String(), staffing.FieldMedianWait)
	fmt.Fprintln(w, "plan:")
	out := func(label, value string) { fmt.Fprintf(w, "  %-28s %s\n", label, value) }
	out("approvals per day", num(p.ApprovalsPerDay))
	out("approvals per hour (mean)", num(p.ApprovalsPerHour))
	out("approvals in the peak hour", num(p.ApprovalsPerPeakHour))
	out("reviewers busy at peak", num(p.BusyAtPeak))
	out("reviewers on shift", fmt.Sprintf("%d (%s unrounded, at %s%% utilization)", p.OnShift, num(p.OnShiftExact), num(100*l.Utilization)))
	out("tickets parked at peak", fmt.Sprintf("%s (Little's law: peak arrivals × %s median wait)", num(p.ParkedAtPeak), l.MedianWait))
	if rep.Sources[staffing.FieldReviewTime] == fromAudit {
		fmt.Fprintln(w, "note: the review time from the audit chain is the median time to decision, which includes the wait;")
		fmt.Fprintln(w, "      it overstates the reviewers needed when tickets waited. Set --review to a measured review time.")
	}
}

// num prints v with at most two decimals and none when it is whole.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
