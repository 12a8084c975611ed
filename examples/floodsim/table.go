package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/flood/sim"
)

// tableAttacker is one attacker of the sensitivity table.
type tableAttacker struct {
	name   string
	attack func(sim.Attack) sim.Attack
}

var tableAttackers = []tableAttacker{
	{"naive (identical, one session)", func(a sim.Attack) sim.Attack { return a }},
	{"disguised", func(a sim.Attack) sim.Attack { a.Disguise = true; return a }},
	{"disguised, spread over 4 agents", func(a sim.Attack) sim.Attack {
		a.Disguise, a.Spread, a.Scope = true, 4, flood.ScopeAgent
		return a
	}},
}

// runTable prints the sensitivity table: every combination of approvers,
// rested miss, correlation and attacker, with the controls off and on,
// from the scenario and controls the other flags set.
func runTable(ctx context.Context, o options, stdout, stderr io.Writer) int {
	type cell struct {
		approvals int
		miss, cor float64
		at        tableAttacker
	}
	var cells []cell
	for _, k := range []int{1, 2} {
		for _, m := range []float64{0.02, 0.15, 0.3} {
			for _, c := range []float64{0.5, 0.8} {
				for _, a := range tableAttackers {
					cells = append(cells, cell{k, m, c, a})
				}
			}
		}
	}
	fmt.Fprintf(stdout, "%d shifts of %v per row, seed %d; 95%% Wilson intervals. Controls on: %s (approvers as in the row).\n\n",
		o.runs, o.scenario.Shift, o.seed, describe(o.on))
	fmt.Fprintln(stdout, "| approvers | rested miss | correlation | attacker | off (naive queue) | all on | benign done, on |")
	fmt.Fprintln(stdout, "|---:|---:|---:|---|---:|---:|---:|")
	for _, c := range cells {
		sc := o.scenario
		sc.Approver.RestedMiss, sc.Approver.Correlation = c.miss, c.cor
		sc.Attack = c.at.attack(sc.Attack)
		off := sim.NaiveQueue()
		off.Approvals = c.approvals
		on := o.on
		on.Approvals = c.approvals
		configs := []sim.Named{{Name: "off", Controls: off}, {Name: "on", Controls: on}}
		for _, n := range configs {
			if err := (sim.Config{Scenario: sc, Controls: n.Controls, Runs: o.runs, Seed: o.seed}).Validate(); err != nil {
				fmt.Fprintf(stderr, "floodsim: table: %v\n", err)
				return exitUsage
			}
		}
		rows, err := sim.Compare(ctx, sc, configs, o.runs, o.seed)
		if err != nil {
			fmt.Fprintln(stderr, "floodsim:", err)
			return exitError
		}
		f, n := rows[0].Result, rows[1].Result
		fmt.Fprintf(stdout, "| %d | %g | %g | %s | %s | %s | %.1f%% |\n", c.approvals, c.miss, c.cor, c.at.name,
			proportion(f.AttackSuccess), proportion(n.AttackSuccess), 100*n.BenignDone.Mean)
	}
	return exitOK
}

func proportion(p sim.Proportion) string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", p.P, p.Lo, p.Hi)
}
