package gate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/gate/internal/desk"
	"github.com/agentstepup/asu/stepup/gate/internal/run"
)

// TestDocumentedValuesAreTheInternalOnes: package gate writes its
// constants out, so go doc shows their values rather than an internal
// name; they are the values the internal parts work with.
func TestDocumentedValuesAreTheInternalOnes(t *testing.T) {
	assert.Equal(t, core.ScopeName, gate.ScopeName)
	assert.Equal(t, core.AttrDecision, gate.AttrDecision)
	assert.Equal(t, core.AttrClass, gate.AttrClass)
	assert.Equal(t, core.AttrFloodScope, gate.AttrFloodScope)
	assert.Equal(t, core.AttrFloodLimit, gate.AttrFloodLimit)
	assert.Equal(t, core.AttrOutcome, gate.AttrOutcome)
	assert.Equal(t, core.AttrPracticeClass, gate.AttrPracticeClass)
	assert.Equal(t, core.BelowFloorMaxAge, gate.BelowFloorMaxAge)
	assert.Equal(t, core.AttrPracticeOutcome, gate.AttrPracticeOutcome)
	assert.Equal(t, core.DefaultPluginTimeout, gate.DefaultPluginTimeout)
	assert.Equal(t, core.DefaultExecuteTimeout, gate.DefaultExecuteTimeout)
	assert.Equal(t, desk.MaxMetricsWindow, gate.MaxMetricsWindow)
	assert.Equal(t, run.NotRunWindow, gate.NotRunWindow)
	assert.Equal(t, core.ClockStepTolerance, gate.ClockStepTolerance)
	assert.Equal(t, core.MinKeySize, 32)
}
