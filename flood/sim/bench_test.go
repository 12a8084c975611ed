package sim

import (
	"context"
	"testing"
)

// BenchmarkShift measures one default shift, per configuration.
func BenchmarkShift(b *testing.B) {
	for _, n := range Ablation(AllControls()) {
		b.Run(n.Name, func(b *testing.B) {
			sc := DefaultScenario()
			for i := 0; b.Loop(); i++ {
				if _, err := runShift(context.Background(), sc, n.Controls, 1, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
