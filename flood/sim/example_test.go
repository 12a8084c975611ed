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
	// naive queue: attack succeeded in 150 of 300 shifts, 0.50 [0.44, 0.56]
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
	// naive queue  attack success 0.89 [0.81, 0.94], 61 malicious cards a shift
	// all controls attack success 0.00 [0.00, 0.04], 1 malicious cards a shift
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
	for _, n := range sim.Ablation(on) {
		c := n.Controls
		fmt.Printf("%-34s flood %-5v targets %-5v practice %-4v confirm %v\n", n.Name, c.Flood, c.Targets, c.Practice, c.Confirm)
	}
	// Output:
	// off (naive queue)                  flood false targets false practice 0    confirm false
	// all on but flood                   flood false targets false practice 0.02 confirm true
	// all on but targets                 flood true  targets false practice 0.02 confirm true
	// all on but first-contact approver  flood true  targets true  practice 0.02 confirm true
	// all on but dwell                   flood true  targets true  practice 0.02 confirm true
	// all on but practice                flood true  targets true  practice 0    confirm true
	// all on but confirm                 flood true  targets true  practice 0.02 confirm false
	// all on                             flood true  targets true  practice 0.02 confirm true
}
