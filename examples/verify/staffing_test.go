package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
)

func TestStaffingWorkedExample(t *testing.T) {
	code, out, errOut := runCLI(approvedAt, "staffing")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	for _, line := range []string{
		"  tasks per day                20000        default\n",
		"  share needing approval       6%           default\n",
		"  approvals per day            1440\n",
		"  approvals in the peak hour   180\n",
		"  reviewers busy at peak       3\n",
		"  reviewers on shift           5 (4.29 unrounded, at 70% utilization)\n",
		"  tickets parked at peak       60 (Little's law: peak arrivals × 20m0s median wait)\n",
	} {
		assert.Contains(t, out, line)
	}
	assert.NotContains(t, out, "note:", "no audit, no note on the review time")
}

// The exercise: 100,000 tasks a day, 2% needing approval, 90 seconds per
// review: 2,400 approvals a day, 300 at peak, 7.5 reviewers busy, 11 on
// shift, 100 parked.
func TestStaffingExercise(t *testing.T) {
	code, out, errOut := runCLI(approvedAt, "staffing", "--tasks", "100000", "--share", "0.02", "--review", "90s")
	require.Equal(t, 0, code, errOut)
	for _, line := range []string{
		"  tasks per day                100000       flag\n",
		"  approvals per task           1.20         default\n",
		"  approvals per day            2400\n",
		"  approvals in the peak hour   300\n",
		"  reviewers busy at peak       7.50\n",
		"  reviewers on shift           11 (10.71 unrounded, at 70% utilization)\n",
		"  tickets parked at peak       100 (Little's law: peak arrivals × 20m0s median wait)\n",
	} {
		assert.Contains(t, out, line)
	}
}

type staffingJSON struct {
	Plan struct {
		Load struct {
			TasksPerDay      float64 `json:"tasks_per_day"`
			ApprovalShare    float64 `json:"approval_share"`
			ApprovalsPerTask float64 `json:"approvals_per_task"`
			PeakFactor       float64 `json:"peak_factor"`
			ReviewTime       int64   `json:"review_time_ns"`
			Utilization      float64 `json:"target_utilization"`
			MedianWait       int64   `json:"median_wait_ns"`
		} `json:"load"`
		ApprovalsPerDay      float64 `json:"approvals_per_day"`
		ApprovalsPerPeakHour float64 `json:"approvals_per_peak_hour"`
		BusyAtPeak           float64 `json:"reviewers_busy_at_peak"`
		OnShiftExact         float64 `json:"reviewers_on_shift_exact"`
		OnShift              int     `json:"reviewers_on_shift"`
		ParkedAtPeak         float64 `json:"parked_at_peak"`
	} `json:"plan"`
	Sources map[string]string `json:"sources"`
	Audit   *struct {
		File     string `json:"file"`
		Observed struct {
			Records   int     `json:"records"`
			Tasks     int     `json:"tasks"`
			Requests  int     `json:"requests"`
			Decisions int     `json:"decisions"`
			Days      float64 `json:"days"`
		} `json:"observed"`
	} `json:"audit"`
}

func TestStaffingJSON(t *testing.T) {
	code, out, errOut := runCLI(approvedAt, "staffing", "--json", "--utilization", "0.6")
	require.Equal(t, 0, code, errOut)
	var rep staffingJSON
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 1440, rep.Plan.ApprovalsPerDay, 1e-9)
	assert.InDelta(t, 180, rep.Plan.ApprovalsPerPeakHour, 1e-9)
	assert.InDelta(t, 3, rep.Plan.BusyAtPeak, 1e-9)
	assert.InDelta(t, 5, rep.Plan.OnShiftExact, 1e-9)
	assert.Equal(t, 5, rep.Plan.OnShift)
	assert.InDelta(t, 60, rep.Plan.ParkedAtPeak, 1e-9)
	assert.Equal(t, int64(time.Minute), rep.Plan.Load.ReviewTime)
	assert.Equal(t, map[string]string{"tasks_per_day": "default", "approval_share": "default", "approvals_per_task": "default",
		"peak_factor": "default", "review_time_ns": "default", "target_utilization": "flag", "median_wait_ns": "default"}, rep.Sources)
	assert.Nil(t, rep.Audit)
}

// writeRecords writes records as an exported chain, hashed and linked as a
// gate writes them, and returns its path.
func writeRecords(t *testing.T, records []audit.Record) string {
	t.Helper()
	var prev audit.Record
	for i := range records {
		r := &records[i]
		r.Seq = int64(i + 1)
		if i > 0 {
			r.PrevHash = prev.Hash
		}
		h, err := r.ComputeHash()
		require.NoError(t, err)
		r.Hash = h
		prev = *r
	}
	return writeChain(t, records)
}

// halfHourTasks is a day of 48 tasks, one every half hour; every other
// one asks for an approval, decided in 30 seconds. A closing record at
// 24:00 makes the span exactly one day.
func halfHourTasks() []audit.Record {
	var out []audit.Record
	for i := range 48 {
		at := approvedAt.Add(time.Duration(i) * 30 * time.Minute).UnixMilli()
		task := fmt.Sprintf("task-%d", i)
		out = append(out, audit.Record{Time: at, Task: task, Decision: audit.DecisionAllow})
		if i%2 == 0 {
			out = append(out,
				audit.Record{Time: at, Task: task, Decision: audit.DecisionNeedsApproval},
				audit.Record{Time: at + 30_000, Task: task, Decision: audit.DecisionApproved, Approver: "user:dana", DecisionMillis: 30_000})
		}
	}
	return append(out, audit.Record{Time: approvedAt.Add(24 * time.Hour).UnixMilli(), Task: "task-47", Decision: audit.DecisionExecuted})
}

func TestStaffingFromAudit(t *testing.T) {
	file := writeRecords(t, halfHourTasks())
	code, out, errOut := runCLI(approvedAt, "staffing", "--audit", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "observed in "+file+" (read, not verified): 97 records over 1 day, 48 tasks (24 asked for approval), 24 requests, 24 decisions, busiest hour 1 requests, median decision 30s\n")
	for _, line := range []string{
		"  tasks per day                48           audit\n",
		"  share needing approval       50%          audit\n",
		"  approvals per task           1            audit\n",
		"  peak factor                  1            audit\n",
		"  review time                  30s          audit\n",
		"  target utilization           70%          default\n",
		"  median wait                  30s          audit\n",
		"  approvals per day            24\n",
		"  reviewers on shift           1 (0.01 unrounded, at 70% utilization)\n",
	} {
		assert.Contains(t, out, line)
	}
	assert.Contains(t, out, "note: the review time from the audit chain is the median time to decision")

	// Flags override what the file shows; the note goes with the audit's
	// review time.
	code, out, errOut = runCLI(approvedAt, "staffing", "--audit", file, "--review", "2m", "--wait", "20m", "--tasks", "4800", "--json")
	require.Equal(t, 0, code, errOut)
	var rep staffingJSON
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Audit)
	assert.Equal(t, file, rep.Audit.File)
	assert.Equal(t, 97, rep.Audit.Observed.Records)
	assert.InDelta(t, 1, rep.Audit.Observed.Days, 1e-12)
	assert.Equal(t, "flag", rep.Sources["tasks_per_day"])
	assert.Equal(t, "audit", rep.Sources["approval_share"])
	assert.Equal(t, "flag", rep.Sources["review_time_ns"])
	assert.Equal(t, "default", rep.Sources["target_utilization"])
	assert.InDelta(t, 2400, rep.Plan.ApprovalsPerDay, 1e-9, "4,800 tasks, half of them asking once")
	assert.InDelta(t, 100, rep.Plan.ApprovalsPerPeakHour, 1e-9)
	assert.InDelta(t, 100.0*2/60, rep.Plan.BusyAtPeak, 1e-9)
	assert.Equal(t, 5, rep.Plan.OnShift, "3.33 busy / 0.7 = 4.76")

	code, out, _ = runCLI(approvedAt, "staffing", "--audit", file, "--review", "2m")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "note:")
}

func TestStaffingFromAuditIsReadNotVerified(t *testing.T) {
	records := halfHourTasks()
	file := writeChain(t, records) // no hashes: not a valid chain
	code, _, _ := runCLI(approvedAt, "audit", file)
	require.Equal(t, 1, code)
	code, out, errOut := runCLI(approvedAt, "staffing", "--audit", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "(read, not verified)")
}

func TestStaffingErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"seq\":1}\nnot json\n"), 0o600))
	// One request in an hour of one task, answered in 200 hours: a
	// review time past the bound.
	slow := writeRecords(t, []audit.Record{
		{Time: approvedAt.UnixMilli(), Task: "a", Decision: audit.DecisionNeedsApproval},
		{Time: approvedAt.UnixMilli(), Task: "a", Decision: audit.DecisionApproved, DecisionMillis: 200 * 3600 * 1000},
	})
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"share over 1", []string{"--share", "1.5"}, "--share (approval_share, from flag) is 1.5; it must be a share from 0 to 1"},
		{"share as a percentage", []string{"--share", "6"}, "--share"},
		{"negative tasks", []string{"--tasks", "-5"}, "--tasks"},
		{"NaN tasks", []string{"--tasks", "NaN"}, "--tasks (tasks_per_day, from flag) is NaN"},
		{"absurd tasks", []string{"--tasks", "1e12"}, "--tasks"},
		{"zero utilization", []string{"--utilization", "0"}, "--utilization"},
		{"utilization over 1", []string{"--utilization", "1.5"}, "--utilization"},
		{"peak under 1", []string{"--peak", "0.5"}, "--peak"},
		{"no review time", []string{"--review", "0s"}, "--review"},
		{"negative wait", []string{"--wait", "-1m"}, "--wait"},
		{"not a duration", []string{"--review", "60"}, "invalid value"},
		{"not a number", []string{"--tasks", "many"}, "invalid value"},
		{"unknown flag", []string{"--reviewers", "3"}, "not defined"},
		{"a FILE", []string{"audit.jsonl"}, "staffing takes no FILE"},
		{"missing audit file", []string{"--audit", filepath.Join(dir, "nope.jsonl")}, "read audit chain"},
		{"malformed audit file", []string{"--audit", bad}, "line 2"},
		{"empty audit file", []string{"--audit", empty}, "holds no audit records"},
		{"audit review time out of range", []string{"--audit", slow}, "--review (review_time_ns, from audit) is 200h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(approvedAt, append([]string{"staffing"}, tt.args...)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.says)
		})
	}
	// The audit's out-of-range review time is overridden by a flag.
	code, _, errOut := runCLI(approvedAt, "staffing", "--audit", slow, "--review", "1m")
	assert.Equal(t, 0, code, errOut)
}

// TestUsageNamesEveryStaffingFlag: the usage text lists exactly the
// flags `verify staffing` takes, and each of them works.
func TestUsageNamesEveryStaffingFlag(t *testing.T) {
	i := strings.Index(usage, "verify staffing")
	require.Positive(t, i)
	var listed []string
	for _, m := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(usage[i:], -1) {
		listed = append(listed, m[1])
	}
	file := writeRecords(t, halfHourTasks())
	valid := map[string][]string{
		"audit": {"--audit", file}, "tasks": {"--tasks", "1000"}, "share": {"--share", "0.1"},
		"per-task": {"--per-task", "2"}, "peak": {"--peak", "4"}, "review": {"--review", "45s"},
		"utilization": {"--utilization", "0.5"}, "wait": {"--wait", "5m"}, "json": {"--json"},
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(valid)), listed)
	for _, name := range listed {
		code, _, errOut := runCLI(approvedAt, append([]string{"staffing"}, valid[name]...)...)
		assert.Equal(t, 0, code, "--%s: %s", name, errOut)
	}
	code, out, _ := runCLI(approvedAt, "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "verify staffing [--audit FILE]")
}
