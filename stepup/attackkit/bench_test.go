package attackkit_test

import (
	"testing"

	"github.com/agentstepup/asu/stepup/attackkit"
)

// BenchmarkAssess runs the whole catalogue. The naive loop, which keeps
// everything in a map, is the same-run baseline: the kit's own cost.
func BenchmarkAssess(b *testing.B) {
	for _, bb := range []struct {
		name    string
		adapter attackkit.Adapter
	}{
		{"naive loop (the kit's own cost)", naive},
		{"in-process gate", inProcess},
		{"remote client and approval site", overHTTP},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				attackkit.Assess(b, bb.adapter)
			}
		})
	}
}
