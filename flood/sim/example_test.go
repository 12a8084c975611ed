package sim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood/sim"
)

func ExampleRun() {
	sc := sim.DefaultScenario()
	r, err := sim.Run(context.Background(), sim.Config{Scenario: sc, Controls: sim.NaiveQueue(), Runs: 300, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := r.AttackSuccess
	fmt.Printf("naive queue: attack succeeded in %d of %d shifts, %.2f [%.2f, %.2f]\n", s.Successes, s.Trials, s.P, s.Lo, s.Hi)
	fmt.Printf("benign requests done: %.0f%%\n", 100*r.BenignDone.Mean)
	// Output:
	// naive queue: attack succeeded in 147 of 300 shifts, 0.49 [0.43, 0.55]
	// benign requests done: 98%
}

func ExampleCompare() {
	// A two-hour shift in which the attacker sends a disguised burst of
	// ten every twenty minutes.
	sc := sim.DefaultScenario()
	sc.Shift = 2 * time.Hour
	sc.Attack.Rate, sc.Attack.Burst, sc.Attack.Disguise = 30, 10, true
	rows, err := sim.Compare(context.Background(), sc, []sim.Named{
		{Name: "naive queue", Controls: sim.NaiveQueue()},
		{Name: "all controls", Controls: sim.AllControls()},
	}, 100, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range rows {
		s := row.Result.AttackSuccess
		fmt.Printf("%-12s attack success %.2f [%.2f, %.2f], %.0f malicious cards a shift\n",
			row.Name, s.P, s.Lo, s.Hi, row.Result.MaliciousCards.Mean)
	}
	// Output:
	// naive queue  attack success 0.93 [0.86, 0.97], 61 malicious cards a shift
	// all controls attack success 0.00 [0.00, 0.04], 8 malicious cards a shift
}

func ExampleWilson() {
	lo, hi := sim.Wilson(0, 1000)
	fmt.Printf("0 of 1000: [%.4f, %.4f]\n", lo, hi)
	// Output:
	// 0 of 1000: [0.0000, 0.0038]
}

func ExampleConfig_Validate() {
	c := sim.Config{Scenario: sim.DefaultScenario(), Controls: sim.AllControls(), Runs: 10}
	c.Controls.Approvals = 0
	fmt.Println(c.Validate())
	// Output:
	// sim: invalid parameters: approvals must be between 1 and 8, got 0
}

func ExampleAblation() {
	on := sim.AllControls()
	on.Dwell = 10 * time.Second
	for _, n := range sim.Ablation(on) {
		fmt.Printf("%-18s flood %-5v dwell %-4v approvals %d\n", n.Name, n.Controls.Flood, n.Controls.Dwell, n.Controls.Approvals)
	}
	// Output:
	// off (naive queue)  flood false dwell 0s   approvals 1
	// flood limits only  flood true  dwell 0s   approvals 1
	// dwell only         flood false dwell 10s  approvals 1
	// rule of 2 only     flood false dwell 0s   approvals 2
	// all on             flood true  dwell 10s  approvals 2
}
