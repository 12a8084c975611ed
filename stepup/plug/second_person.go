package plug

import (
	"fmt"

	"github.com/agentstepup/asu/stepup"
)

// ErrSecondPersonNeeded refuses an approval by a person whose catch rate
// of practice requests lies wholly below the floor, of a class the
// operator named (gate.WithSecondPersonBelowFloor): another person of the
// group must approve it. Their denial still counts. It wraps
// [stepup.ErrNotPermitted].
var ErrSecondPersonNeeded = fmt.Errorf("gate: your catch rate of practice requests is below the floor, so another person must approve calls of this class for now: %w", stepup.ErrNotPermitted)
