package adaptertest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/agentstepup/asu/stepup/plug"
)

// Versioned is a policy whose version an operator bumps with Change: the
// same rules under a new version, as a redeployed catalog has. It is the
// attack kit's ChangePolicy hook.
type Versioned struct {
	plug.Policy
	rev atomic.Int64
}

// Decide is the wrapped policy's decision under the current version.
func (p *Versioned) Decide(ctx context.Context, prop plug.Proposal) (plug.Decision, error) {
	d, err := p.Policy.Decide(ctx, prop)
	if err == nil {
		d.PolicyVersion += fmt.Sprintf("+r%d", p.rev.Load())
	}
	return d, err
}

// Change deploys a new version.
func (p *Versioned) Change(context.Context) error {
	p.rev.Add(1)
	return nil
}
