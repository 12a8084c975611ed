package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
)

// quick keeps the runs cheap: a short shift and few runs.
var quick = []string{"-runs", "20", "-shift", "1h", "-seed", "7"}

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTable(t *testing.T) {
	code, out, stderr := runArgs(t, append(quick, "-each")...)
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{"20 shifts of 1h0m0s, seed 7", "off (naive queue)", "all on but flood", "all on but dwell",
		"all on but targets", "all on but first-contact approver", "all on but practice", "all on but confirm",
		"all on", "attack success [95% CI]", "session 10/10m", "approver inflow 30/1h",
		"lockouts: session 3/15m", "dwell 3s", "first contact: rate 5/1h per user, 1/1h per target, lockout 1/24h, 2 approvers",
		"practice requests 0.02", "active confirmation", "refused by flood control"} {
		assert.Contains(t, out, want)
	}

	// Without -each: off and on only.
	code, out, _ = runArgs(t, quick...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "all on")
	assert.NotContains(t, out, "all on but")
}

func TestSensitivityTable(t *testing.T) {
	code, out, stderr := runArgs(t, "-runs", "2", "-shift", "20m", "-seed", "3", "-table")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| approvers") {
			rows = append(rows, l)
		}
	}
	// 2 approver counts x 3 misses x 2 correlations x 3 attackers.
	assert.Len(t, rows, 36)
	assert.Contains(t, out, "| 2 | 0.3 | 0.8 | disguised, spread over 4 agents |")

	code, _, _ = runArgs(t, "-table", "-each")
	assert.Equal(t, exitUsage, code)
}

func TestJSON(t *testing.T) {
	args := append(quick, "-json", "-disguise", "-spread", "3", "-spread-scope", "user", "-session-rate", "off",
		"-user-lockout", "2/10m", "-approvals", "3", "-dwell", "8s", "-pending-per-user", "0",
		"-first-contact-target-rate", "2/30m", "-practice", "0.1", "-confirm=false", "-attack-targets", "2")
	code, out, stderr := runArgs(t, args...)
	require.Equal(t, exitOK, code, stderr)
	var doc struct {
		Runs     int `json:"runs"`
		Scenario struct {
			Attack struct {
				Disguise bool   `json:"disguise"`
				Spread   int    `json:"spread"`
				Scope    string `json:"scope"`
				Targets  int    `json:"targets"`
			} `json:"attack"`
		} `json:"scenario"`
		On struct {
			Limits struct {
				SessionRate            string `json:"session_rate"`
				UserLockout            string `json:"user_lockout"`
				PendingPerUser         int    `json:"pending_per_user"`
				FirstContactTargetRate string `json:"first_contact_target_rate"`
			} `json:"limits"`
			Dwell     string  `json:"dwell"`
			Approvals int     `json:"approvals"`
			Targets   bool    `json:"targets"`
			Practice  float64 `json:"practice"`
			Confirm   bool    `json:"confirm"`
		} `json:"controls_on"`
		Rows []struct {
			Name   string `json:"name"`
			Result struct {
				AttackSuccess struct {
					Trials int     `json:"trials"`
					Lo     float64 `json:"lo"`
					Hi     float64 `json:"hi"`
				} `json:"attack_success"`
			} `json:"result"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, 20, doc.Runs)
	assert.True(t, doc.Scenario.Attack.Disguise)
	assert.Equal(t, 3, doc.Scenario.Attack.Spread)
	assert.Equal(t, "user", doc.Scenario.Attack.Scope)
	assert.Equal(t, "off", doc.On.Limits.SessionRate)
	assert.Equal(t, "2/10m", doc.On.Limits.UserLockout)
	assert.Equal(t, -1, doc.On.Limits.PendingPerUser)
	assert.Equal(t, "8s", doc.On.Dwell)
	assert.Equal(t, 3, doc.On.Approvals)
	assert.Equal(t, 2, doc.Scenario.Attack.Targets)
	assert.Equal(t, "2/30m", doc.On.Limits.FirstContactTargetRate)
	assert.True(t, doc.On.Targets)
	assert.InDelta(t, 0.1, doc.On.Practice, 1e-12)
	assert.False(t, doc.On.Confirm)
	require.Len(t, doc.Rows, 2)
	for _, r := range doc.Rows {
		assert.Equal(t, 20, r.Result.AttackSuccess.Trials, r.Name)
		assert.LessOrEqual(t, r.Result.AttackSuccess.Lo, r.Result.AttackSuccess.Hi, r.Name)
	}

	// The same flags print the same figures.
	_, again, _ := runArgs(t, args...)
	assert.Equal(t, out, again)
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-runs", "0"}, "runs must be"},
		{[]string{"-runs", "many"}, "invalid value"},
		{[]string{"-session-rate", "10"}, "COUNT/DURATION"},
		{[]string{"-agent-rate", "0/1h"}, "count must be"},
		{[]string{"-user-rate", "5/soon"}, "duration must be"},
		{[]string{"-approver-inflow", "5/-1h"}, "duration must be"},
		{[]string{"-session-rate", "5/1ns"}, "whole microseconds"},
		{[]string{"-agent-lockout", "x/1h"}, "count must be"},
		{[]string{"-spread-scope", "approver"}, "want session, agent or user"},
		{[]string{"-burst", "0"}, "burst must be"},
		{[]string{"-approvals", "9"}, "approvals must be"},
		{[]string{"-rested-miss", "1.5"}, "rested miss"},
		{[]string{"-shift", "48h"}, "shift must be"},
		{[]string{"-benign-rate", "5000"}, "expects"},
		{[]string{"stray"}, "unexpected argument"},
		{[]string{"-no-such-flag"}, "not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, stderr := runArgs(t, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tt.want)
		})
	}
	code, _, stderr := runArgs(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stderr, "-approver-inflow")
}

func TestParseRateAndLockout(t *testing.T) {
	r, err := parseRate("10/10m")
	require.NoError(t, err)
	assert.Equal(t, flood.Rate{N: 10, Per: 10 * time.Minute}, r)
	r, err = parseRate("off")
	require.NoError(t, err)
	assert.Equal(t, int64(-1), r.N)
	l, err := parseLockout("3/15m")
	require.NoError(t, err)
	assert.Equal(t, flood.Lockout{After: 3, For: 15 * time.Minute}, l)
	_, err = parseRate(strings.Repeat("1", 100) + "/1m")
	assert.ErrorContains(t, err, "longer than")

	for _, r := range []flood.Rate{flood.DefaultSessionRate, flood.DefaultAgentRate, {N: 7, Per: 90 * time.Minute}, {N: -1}} {
		back, err := parseRate(rateString(r))
		require.NoError(t, err)
		assert.Equal(t, r, back, rateString(r))
	}
	assert.Equal(t, "4/30m", lockoutString(flood.DefaultAgentLockout))
	assert.Equal(t, "5/1h", lockoutString(flood.DefaultUserLockout))
}

// FuzzParseRate: any text is refused or read as a rate and a lockout that
// print back to text reading the same.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/10m", "off", "3/15m", "1/1ns", "0/1h", "x/y", "/", "9999999999/1h", "5/1h30m", "5/-1s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := parseRate(s); err == nil {
			back, err := parseRate(rateString(r))
			require.NoError(t, err)
			require.Equal(t, r, back)
		}
		if l, err := parseLockout(s); err == nil {
			back, err := parseLockout(lockoutString(l))
			require.NoError(t, err)
			require.Equal(t, l, back)
		}
	})
}
