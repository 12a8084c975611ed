package cputime_test

import (
	"fmt"
	"testing"

	"github.com/agentstepup/asu/internal/cputime"
)

// TestProcessGrowsWithWork: spinning for a while moves the figure on
// (where the system reports it at all).
func TestProcessGrowsWithWork(t *testing.T) {
	start := cputime.Process()
	if start == 0 {
		t.Skip("this system reports no process CPU time")
	}
	x := 0
	for i := 0; cputime.Process()-start < 20e6 && i < 1e9; i++ {
		x += i
	}
	if cputime.Process() <= start {
		t.Fatalf("no CPU time counted (%d)", x)
	}
}

func ExampleProcess() {
	start := cputime.Process()
	sum := 0
	for i := range 1_000_000 {
		sum += i % 7
	}
	fmt.Println(sum > 0, cputime.Process() >= start)
	// Output: true true
}
