package attackkit

import (
	"fmt"
	"strings"
)

// Property is one of the seven properties of an approval that is a real
// second factor.
type Property int

// The properties the kit checks.
const (
	P1 Property = iota + 1 // agent independence
	P2                     // effect binding
	P3                     // freshness and single use
	P4                     // trusted rendering
	P5                     // non-repudiation
	P6                     // scope integrity
	P7                     // flood resistance
)

var propertyNames = [...]string{"", "agent independence", "effect binding", "freshness and single use",
	"trusted rendering", "non-repudiation", "scope integrity", "flood resistance"}

// String returns the property's number and name, e.g. "P2 effect binding".
func (p Property) String() string {
	if p < P1 || p > P7 {
		return fmt.Sprintf("P%d", int(p))
	}
	return fmt.Sprintf("P%d %s", int(p), propertyNames[p])
}

// Outcome is what one attack found.
type Outcome string

// Outcomes of an attack.
const (
	Held    Outcome = "held"    // the property held against every case tried
	Broken  Outcome = "broken"  // at least one case broke it
	Skipped Outcome = "skipped" // the integration offers no path for the attack
)

// Result is one attack's outcome.
type Result struct {
	Property Property
	Attack   string
	Outcome  Outcome
	// Detail is what broke, one finding a line, or why the attack was
	// skipped.
	Detail string
}

// Report is the outcome of every attack the kit tried, in order.
type Report struct {
	Results []Result
}

// Outcome summarizes property p: broken if any of its attacks broke it,
// held if at least one held and none broke, skipped if none could run.
func (r Report) Outcome(p Property) Outcome {
	out := Skipped
	for _, res := range r.Results {
		if res.Property != p {
			continue
		}
		switch res.Outcome {
		case Broken:
			return Broken
		case Held:
			out = Held
		}
	}
	return out
}

// Result returns the result of the attack named name.
func (r Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Attack == name {
			return res, true
		}
	}
	return Result{}, false
}

// Broken returns the attacks that broke a property.
func (r Report) Broken() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Outcome == Broken {
			out = append(out, res)
		}
	}
	return out
}

// String is the report as a table: one line per property, then one per
// attack that did not hold.
func (r Report) String() string {
	var b strings.Builder
	for p := P1; p <= P7; p++ {
		n, held := 0, 0
		for _, res := range r.Results {
			if res.Property == p {
				n++
				if res.Outcome == Held {
					held++
				}
			}
		}
		fmt.Fprintf(&b, "%-28s %-8s %d of %d attacks held\n", p, r.Outcome(p), held, n)
	}
	for _, res := range r.Results {
		if res.Outcome == Held {
			continue
		}
		first, _, _ := strings.Cut(res.Detail, "\n")
		fmt.Fprintf(&b, "  %s: %s / %s: %s\n", res.Outcome, res.Property, res.Attack, first)
	}
	return b.String()
}
