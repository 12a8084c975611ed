package core

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store"
)

// ContainPlugins puts every plug-in of g behind [Contain]: its policy (and
// the policy's Router), approver (and its Receipter), renderer, grant
// check, flood control, executors and model judge. The gate then calls only the
// contained ones, so no call site can forget. Optional interfaces the
// plug-ins implement are kept. Calling it twice wraps nothing twice.
func (g *Gate) ContainPlugins() {
	switch p := g.cfg.Policy.(type) {
	case nil, containedPolicy, containedRouter:
	default:
		_, parsed := p.(plug.ParsedDecider)
		if r, ok := p.(plug.Router); ok {
			g.cfg.Policy = containedRouter{containedPolicy{g, p, parsed, Own(p)}, r}
		} else {
			g.cfg.Policy = containedPolicy{g, p, parsed, Own(p)}
		}
	}
	switch a := g.cfg.Approver.(type) {
	case nil, containedApprover, containedReceipter:
	default:
		if r, ok := a.(Receipter); ok {
			g.cfg.Approver = containedReceipter{containedApprover{g, a, Own(a)}, r}
		} else {
			g.cfg.Approver = containedApprover{g, a, Own(a)}
		}
	}
	if _, ok := g.cfg.Renderer.(containedRenderer); !ok && g.cfg.Renderer != nil {
		g.cfg.Renderer = containedRenderer{g, g.cfg.Renderer, Own(g.cfg.Renderer)}
	}
	if _, ok := g.cfg.Coverage.(containedGrants); !ok && g.cfg.Coverage != nil {
		g.cfg.Coverage = containedGrants{g, g.cfg.Coverage, Own(g.cfg.Coverage)}
	}
	if _, ok := g.cfg.Flood.(containedFlood); !ok && g.cfg.Flood != nil {
		g.cfg.Flood = containedFlood{g, g.cfg.Flood, Own(g.cfg.Flood)}
	}
	for tool, e := range g.cfg.Executors {
		if _, ok := e.(containedExecutor); !ok {
			g.cfg.Executors[tool] = containedExecutor{g, e}
		}
	}
	if j := g.cfg.Judging; j != nil {
		if _, ok := j.Judge.(containedJudge); !ok {
			g.cfg.Judging = &JudgeConfig{Judge: containedJudge{g, j.Judge}, Classes: j.Classes}
		}
	}
}

// Own reports whether p is one of asu's own plug-ins: the catalog policy,
// the passkey approver, the card renderer, flood control's limiter and
// the store's grant check. Each honours its context (its waits are the
// store's, which the gate also calls directly) and does work bounded by
// its input's limits, so [Contain] calls it on the caller's goroutine: a
// goroutine of its own would cost each call two hand-offs between cores
// and keep no promise the call does not keep itself. Its panic is still
// recovered and its answer after the deadline still discarded.
func Own(p any) bool {
	switch p.(type) {
	case *policy.Catalog, *passkey.Approver, card.Renderer, *card.Renderer, *flood.Limiter, StoreGrants:
		return true
	}
	return false
}

// Names of the plug-ins, as misbehaviours name them.
const (
	PluginPolicy   = "policy"
	PluginApprover = "approver"
	PluginRenderer = "renderer"
	PluginFlood    = "flood control"
	PluginGrants   = "grant check"
	PluginExecutor = "executor"
	PluginJudge    = "model judge"
	PluginNotifier = "notifier"
)

type containedPolicy struct {
	g      *Gate
	p      plug.Policy
	parsed bool // p is a plug.ParsedDecider
	own    bool // p is asu's own (see Own)
}

func (c containedPolicy) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return contain(ctx, c.g, c.own, PluginPolicy, DefaultPluginTimeout, func(ctx context.Context) (plug.Decision, error) {
		return c.p.Decide(ctx, p)
	})
}

// DecideParsed is only called when c.parsed (see [Gate.Decide]).
func (c containedPolicy) DecideParsed(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return contain(ctx, c.g, c.own, PluginPolicy, DefaultPluginTimeout, func(ctx context.Context) (plug.Decision, error) {
		return c.p.(plug.ParsedDecider).DecideParsed(ctx, p)
	})
}

// Decide asks the policy about p, whose Parsed are the arguments, with
// Args unset: a policy that reads only Parsed ([plug.ParsedDecider]) is
// handed them alone, any other also their text, a copy of its own. The
// policy gets nothing it could write into that the gate reads again: the
// delegations and taint labels it is handed are its own copies too, or a
// policy could change the principal the effect is sealed with.
func (g *Gate) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	p.Principal.Delegations, p.Taint = slices.Clone(p.Principal.Delegations), slices.Clone(p.Taint)
	var pd plug.ParsedDecider
	switch c := g.cfg.Policy.(type) {
	case containedRouter:
		if c.parsed {
			pd = c.containedPolicy
		}
	case containedPolicy:
		if c.parsed {
			pd = c
		}
	case plug.ParsedDecider:
		pd = c
	}
	if pd != nil && p.Parsed.Kind() == canon.KindObject {
		p.Args = nil
		return pd.DecideParsed(ctx, p)
	}
	p.Args = json.RawMessage(p.Parsed.Canonical())
	return g.cfg.Policy.Decide(ctx, p)
}

// containedRouter is a contained policy that routes stored tickets: a
// route it cannot give in time is no route (the ticket is refused as
// decided under rules that no longer hold).
type containedRouter struct {
	containedPolicy
	r plug.Router
}

func (c containedRouter) Route(tool, version string) (plug.Route, bool) {
	type routed struct {
		r  plug.Route
		ok bool
	}
	got, err := contain(context.Background(), c.g, c.own, PluginPolicy, DefaultPluginTimeout, func(context.Context) (routed, error) {
		r, ok := c.r.Route(tool, version)
		return routed{r, ok}, nil
	})
	return got.r, err == nil && got.ok
}

type containedApprover struct {
	g   *Gate
	a   plug.Approver
	own bool
}

func (c containedApprover) Options(ctx context.Context, req plug.Request) (json.RawMessage, error) {
	return contain(ctx, c.g, c.own, PluginApprover, DefaultPluginTimeout, func(ctx context.Context) (json.RawMessage, error) {
		return c.a.Options(ctx, req)
	})
}

func (c containedApprover) Verify(ctx context.Context, req plug.Request, answer []byte) (plug.Verified, error) {
	return contain(ctx, c.g, c.own, PluginApprover, DefaultPluginTimeout, func(ctx context.Context) (plug.Verified, error) {
		return c.a.Verify(ctx, req, answer)
	})
}

func (c containedApprover) Recheck(ctx context.Context, a plug.Answer) error {
	_, err := contain(ctx, c.g, c.own, PluginApprover, DefaultPluginTimeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.a.Recheck(ctx, a)
	})
	return err
}

type containedReceipter struct {
	containedApprover
	r Receipter
}

func (c containedReceipter) Receipt(ctx context.Context, a plug.Answer) (*receipt.Receipt, error) {
	return contain(ctx, c.g, c.own, PluginApprover, DefaultPluginTimeout, func(ctx context.Context) (*receipt.Receipt, error) {
		return c.r.Receipt(ctx, a)
	})
}

// containedRenderer bounds a renderer, which takes no context, by the
// default deadline.
type containedRenderer struct {
	g   *Gate
	r   Renderer
	own bool
}

func (c containedRenderer) RenderSealed(e canon.Sealed, cc card.Context) (*card.Card, error) {
	return contain(context.Background(), c.g, c.own, PluginRenderer, DefaultPluginTimeout, func(context.Context) (*card.Card, error) {
		return c.r.RenderSealed(e, cc)
	})
}

// containedGrants bounds a grant check: a misbehaving one covers
// nothing, and the call goes to a person.
type containedGrants struct {
	g   *Gate
	gr  plug.Coverage
	own bool
}

func (c containedGrants) Target(ctx context.Context, id string, s canon.Sealed) (string, error) {
	return contain(ctx, c.g, c.own, PluginGrants, DefaultPluginTimeout, func(ctx context.Context) (string, error) {
		return c.gr.Target(ctx, id, s)
	})
}

type containedFlood struct {
	g   *Gate
	f   Flood
	own bool
}

func (c containedFlood) Admit(ctx context.Context, r flood.Request) error {
	_, err := contain(ctx, c.g, c.own, PluginFlood, DefaultPluginTimeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.f.Admit(ctx, r)
	})
	return err
}

func (c containedFlood) Decided(ctx context.Context, r flood.Request, approved bool) error {
	_, err := contain(ctx, c.g, c.own, PluginFlood, DefaultPluginTimeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.f.Decided(ctx, r, approved)
	})
	return err
}

// Caps is read once, when the gate is made: a panic there is no caps of
// flood control's own (the gate's pending caps still hold).
func (c containedFlood) Caps() (caps store.Caps) {
	caps, _ = contain(context.Background(), c.g, c.own, PluginFlood, DefaultPluginTimeout, func(context.Context) (store.Caps, error) {
		return c.f.Caps(), nil
	})
	return caps
}

type containedExecutor struct {
	g *Gate
	e plug.Executor
}

func (c containedExecutor) Execute(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
	return Contain(ctx, c.g, PluginExecutor, DefaultExecuteTimeout, func(ctx context.Context) ([]byte, error) {
		return c.e.Execute(ctx, e, key)
	})
}

// containedJudge turns a judge's misbehaviour into a refusal to approve,
// with the misbehaviour as its reason: a verdict it gave late, or never,
// is not used.
type containedJudge struct {
	g *Gate
	j plug.Judge
}

func (c containedJudge) Decide(ctx context.Context, cd, untrusted string) plug.Judgment {
	v, err := Contain(ctx, c.g, PluginJudge, DefaultPluginTimeout, func(ctx context.Context) (plug.Judgment, error) {
		return c.j.Decide(ctx, cd, untrusted), nil
	})
	if err != nil {
		return plug.Judgment{Approve: false, ModelID: "unanswered", Reason: Misbehaviour(err) + "; nothing it said was used",
			Err: err}
	}
	return v
}
