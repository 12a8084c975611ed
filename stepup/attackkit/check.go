package attackkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// check records what one attack found: Errorf adds a finding, FailNow
// ends the attack (never the test). Goroutines an attack starts report
// through their results, never through check.
type check struct {
	ctx context.Context

	mu       sync.Mutex
	failures []string
	skipped  string
}

// stop unwinds an attack that ended early.
type stop struct{}

// Errorf records a finding.
func (c *check) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = append(c.failures, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// FailNow ends the attack.
func (c *check) FailNow() { panic(stop{}) }

// skip ends the attack as skipped, for a path the integration lacks.
func (c *check) skip(reason string) {
	c.skipped = reason
	panic(stop{})
}

// failed reports whether the attack found anything yet.
func (c *check) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.failures) > 0
}
