package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/flood/sim"
	"github.com/agentstepup/asu/stepup/gate"
)

// TestDefaultsAreTheGates: the simulated controls are the gate's own
// defaults.
func TestDefaultsAreTheGates(t *testing.T) {
	assert.Equal(t, gate.DefaultDwell, sim.DefaultDwell)
}
