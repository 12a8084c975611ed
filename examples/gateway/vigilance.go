package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
)

// vigilance are the flags of the controls that keep approvers reading:
// practice requests, active confirmation and a second person for
// approvers below the catch floor. None is on by default.
type vigilance struct {
	practice     multiFlag // GROUP=N: a practice request after every N-th real one for GROUP
	confirm      string    // classes whose approvers pick the key value first
	secondPerson string    // classes an approver below the catch floor may not approve alone
	catchFloor   float64
}

// secondPersonWindow is the window of the audit the catch rates are read
// over: the figures page's.
const secondPersonWindow = 7 * 24 * time.Hour

func vigilanceFlags(fs *flag.FlagSet, v *vigilance) {
	fs.Var(&v.practice, "practice", "`GROUP=N`: after every N-th real request for approver group GROUP, a practice copy with one attack-class change (repeatable; =N for requests routed to a user)")
	fs.StringVar(&v.confirm, "confirm", "", "`classes` (comma-separated, e.g. irreversible,external) whose approvers first pick the card's key value from look-alikes")
	fs.StringVar(&v.secondPerson, "second-person", "", "`classes` an approver whose catch rate of practice requests lies below -catch-floor may not approve alone")
	fs.Float64Var(&v.catchFloor, "catch-floor", figures.DefaultCatchFloor, "least catch `rate` of practice requests, in (0, 1], for -second-person")
}

// options returns the gate options of v, or an error naming the flag.
func (v vigilance) options() ([]gate.Option, error) {
	var opts []gate.Option
	seen := map[string]bool{}
	for _, p := range v.practice {
		group, n, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("-practice %q: want GROUP=N, e.g. finance=50", p)
		}
		oneIn, err := strconv.Atoi(n)
		if err != nil || oneIn < 1 {
			return nil, fmt.Errorf("-practice %q: N is a whole number of real requests, 1 or more", p)
		}
		if seen[group] {
			return nil, fmt.Errorf("-practice %q: group %q has two rates", p, group)
		}
		seen[group] = true
		opts = append(opts, gate.WithPractice(group, oneIn))
	}
	confirm, err := classList("-confirm", v.confirm)
	if err != nil {
		return nil, err
	}
	if len(confirm) > 0 {
		opts = append(opts, gate.WithConfirmation(confirm...))
	}
	second, err := classList("-second-person", v.secondPerson)
	if err != nil {
		return nil, err
	}
	floor := v.catchFloor
	if floor == 0 {
		floor = figures.DefaultCatchFloor // options made in code, not by the flags
	}
	switch {
	case math.IsNaN(floor) || floor < 0 || floor > 1:
		return nil, fmt.Errorf("-catch-floor %v: a rate in (0, 1], e.g. 0.5", v.catchFloor)
	case len(second) > 0 && len(v.practice) == 0:
		return nil, fmt.Errorf("-second-person %s: give -practice too: the catch rate is measured with practice requests", v.secondPerson)
	case len(second) > 0:
		opts = append(opts, gate.WithSecondPersonBelowFloor(floor, secondPersonWindow, second...))
	}
	return opts, nil
}

// classList parses a comma-separated list of effect classes given to flag.
func classList(flag, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	known := []string{card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible}
	var out []string
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if !contains(known, c) {
			return nil, fmt.Errorf("%s %q: %q is not an effect class (the classes are %s)", flag, s, c, strings.Join(known, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}
