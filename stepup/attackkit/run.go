package attackkit

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// attackTimeout bounds one attack: an integration that hangs breaks the
// property it hangs in rather than the test run.
const attackTimeout = 30 * time.Second

// Run tries the whole catalogue against the integration a builds, as
// subtests named by property and attack ("P2 effect binding/substitution
// by a resumer"). An attack that breaks its property fails its subtest
// with what it found; one whose hook the integration does not offer is
// skipped with the reason. Run logs the report and returns it.
func Run(t *testing.T, a Adapter) Report {
	t.Helper()
	var rep Report
	for p := P1; p <= P7; p++ {
		t.Run(p.String(), func(t *testing.T) {
			for _, at := range catalogue() {
				if at.prop != p {
					continue
				}
				t.Run(at.name, func(t *testing.T) {
					res := try(t, a, at)
					rep.Results = append(rep.Results, res)
					switch res.Outcome {
					case Broken:
						t.Error(res.Detail)
					case Skipped:
						t.Skip(res.Detail)
					}
				})
			}
		})
	}
	t.Log("attack kit report:\n" + rep.String())
	return rep
}

// Assess tries the whole catalogue like [Run] but fails nothing: it
// returns what held and what broke. t serves only the adapter (its
// TempDir and Cleanup). Use it to tabulate an integration's standing, or
// to show that the kit catches a loop that is known to be weak.
func Assess(t testing.TB, a Adapter) Report {
	t.Helper()
	var rep Report
	for _, at := range catalogue() {
		rep.Results = append(rep.Results, try(t, a, at))
	}
	return rep
}

// try runs one attack and returns its result.
func try(t testing.TB, a Adapter, at attack) Result {
	ctx, cancel := context.WithTimeout(context.Background(), attackTimeout)
	defer cancel()
	c := &check{ctx: ctx}
	k := &kit{t: t, adapter: a}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					c.Errorf("the integration panicked: %v\n%s", r, debug.Stack())
				}
			}
		}()
		at.run(c, k)
	}()
	res := Result{Property: at.prop, Attack: at.name, Outcome: Held}
	switch {
	case len(c.failures) > 0:
		res.Outcome, res.Detail = Broken, strings.Join(c.failures, "\n")
	case c.skipped != "":
		res.Outcome, res.Detail = Skipped, c.skipped
	}
	return res
}
