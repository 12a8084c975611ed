//go:build !unix

package cputime

import "time"

// Process returns zero: this system's process CPU time is not read.
func Process() time.Duration { return 0 }
