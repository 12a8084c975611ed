package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// WithFlood admits calls that need approval through lim (property P7):
// [Gate.Propose] calls lim.Admit before parking, parks with lim.Caps, and
// the desk reports each approver's decision with lim.Denied or
// lim.Approved. Without this option a gate uses a limiter with flood's
// default limits on its own store; see [WithoutFloodControlUnsafe].
//
// lim keeps its counts in the store it was built on and reads its own
// clock: build it on the gate's store (so every replica shares the
// limits) with the gate's clock.
func WithFlood(lim *flood.Limiter) Option {
	return func(g *Gate) error {
		if lim == nil {
			return fmt.Errorf("%w: nil flood limiter; use WithoutFloodControlUnsafe to turn flood control off", stepup.ErrConfig)
		}
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = lim, true
		return nil
	}
}

// WithoutFloodControlUnsafe turns flood control off: any session may ask
// approvers as often as it likes, and no run of denials locks it out, so a
// looping or hijacked agent can wear approvers down until one approves
// without reading. Pending caps from [WithPendingCaps] still apply.
func WithoutFloodControlUnsafe() Option {
	return func(g *Gate) error {
		if g.floodSet {
			return fmt.Errorf("%w: flood control configured twice", stepup.ErrConfig)
		}
		g.flood, g.floodSet = nil, true
		return nil
	}
}

// parkCaps is the stricter of the configured pending caps and the
// limiter's, field by field (zero is no cap).
func (g *Gate) parkCaps() store.Caps {
	if g.flood == nil {
		return g.caps
	}
	lc := g.flood.Caps()
	return store.Caps{PerSession: stricter(g.caps.PerSession, lc.PerSession),
		PerUser: stricter(g.caps.PerUser, lc.PerUser)}
}

func stricter(a, b int) int {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// admit asks the limiter whether the call's session and user may reach an
// approver now. It returns "" to admit, or the denial's reason for the
// model and how long to wait before asking again.
func (g *Gate) admit(ctx context.Context, session, user string) (string, time.Duration) {
	if g.flood == nil {
		return "", 0
	}
	err := g.flood.Admit(ctx, session, user)
	if err == nil {
		return "", 0
	}
	var le *flood.LimitError
	if !errors.As(err, &le) {
		return "approval requests cannot be admitted now; try again later", 0
	}
	retry := le.RetryAfter.Round(time.Second)
	if retry < le.RetryAfter {
		retry += time.Second
	}
	whose := "this session"
	if le.Scope == flood.ScopeUser {
		whose = "this user"
	}
	if errors.Is(err, flood.ErrLockedOut) {
		return fmt.Sprintf("locked out: approvers denied too many requests of %s in a row; retry after %v", whose, retry), retry
	}
	return fmt.Sprintf("rate limited: too many approval requests from %s; retry after %v", whose, retry), retry
}

// decided reports an approver's decision on a to the limiter: denials
// build towards a lockout, an approval ends the run. Timeouts and
// cancellations are not decisions and are never reported.
func (g *Gate) decided(ctx context.Context, a store.Approval, approved bool) error {
	if g.flood == nil || a.Session == "" || a.User == "" {
		return nil
	}
	if approved {
		// A failed reset leaves the run of denials longer: stricter, never
		// looser, so it is not an error of the approval.
		_ = g.flood.Approved(context.WithoutCancel(ctx), a.Session, a.User)
		return nil
	}
	if err := g.flood.Denied(context.WithoutCancel(ctx), a.Session, a.User); err != nil {
		return fmt.Errorf("deny: %w: the denial could not be counted for lockouts", stepup.ErrStore)
	}
	return nil
}
