//go:build !unix

package card_test

import "time"

// cpuTime is unknown here; benchmarks report wall time only.
func cpuTime() time.Duration { return 0 }
