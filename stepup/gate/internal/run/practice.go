package run

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// practise places a practice request after real request p, parked for
// approvers, when its group's rate says one is due (gate.WithPractice).
// It is best effort and silent: the real request's answer never depends
// on it, and nothing of it reaches the agent, not even in time: the copy
// is made and parked in the background, after the agent has its answer
// (Gate.Settle waits for it). A due copy is never dropped: under a burst
// it waits for a worker, and only past the queue's bound is it made on
// the caller's path (core.MaxBackgroundQueue).
func (g *Gate) practise(ctx context.Context, p *proposal, approvers []string) {
	if core.IsPractice(p.a) || p.quorum > 1 || !g.core.PracticeDue(p.d.Approvers) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	// The caller may reuse what it passed once it has its answer.
	c, group := p.c, p.d.Approvers
	c.Args, c.Taint, approvers = slices.Clone(c.Args), slices.Clone(c.Taint), slices.Clone(approvers)
	c.Principal.Delegations = slices.Clone(c.Principal.Delegations)
	g.core.Background(func() { g.placePractice(ctx, c, group, approvers) }, len(c.Args)+len(c.Rationale))
}

// placePractice makes and parks the practice copy of real call c, routed
// to group.
func (g *Gate) placePractice(ctx context.Context, c stepup.Call, group string, approvers []string) {
	args, class, ok := practiceArgs(c.Args)
	if !ok {
		return
	}
	parsed, err := canon.Parse(args)
	if err != nil || parsed.Kind() != canon.KindObject {
		return
	}
	args = json.RawMessage(parsed.Canonical())
	c.Args, c.Session, c.Grant = args, audit.PracticeSession+class, ""
	d, err := g.core.Decide(ctx, plug.Proposal{Tool: c.Tool, Parsed: parsed, Task: c.Task, Step: c.Step,
		Session: c.Session, Principal: c.Principal, Taint: c.Taint})
	if err != nil || d.Verdict != plug.NeedsApproval || d.PolicyVersion == "" || d.Approvers != group || d.Quorum > 1 {
		return // the copy must reach the same people the same way, or it is not made
	}
	refs, err := canon.ResolveAll(ctx, g.core.Resolver(), d.Refs)
	if err != nil {
		return
	}
	sealed, err := g.SealEffect(canon.Effect{Tool: c.Tool, Args: args, Refs: refs, Task: c.Task, Step: c.Step,
		Principal: c.Principal, PolicyVersion: d.PolicyVersion, Audience: d.Audience}, parsed)
	if err != nil {
		return
	}
	now, err := g.core.Now(ctx)
	if err != nil {
		return
	}
	q := &proposal{c: c, d: d, sealed: sealed, quorum: 1, a: store.Approval{
		Tool: c.Tool, CreatedAt: now, Requester: c.Principal, User: c.Principal.User,
		Session: c.Session, Task: c.Task, Step: c.Step, Taint: c.Taint, Rationale: c.Rationale,
		Effect: sealed.Bytes(), Digest: sealed.Digest(), PolicyVersion: d.PolicyVersion,
		EffectClass: d.Class, Approvers: d.Approvers,
	}}
	q.a.EscalatesTo, q.a.EscalatesAt = g.core.Escalation(now, d.Timeout)
	_, _ = g.park(ctx, q, approvers, "")
}

// get reads ticket id for the agent's side: a practice request's is
// answered as the store answers an unknown id.
func (g *Gate) get(ctx context.Context, id stepup.TicketID) (store.Approval, error) {
	a, err := g.core.St().Get(ctx, string(id))
	if err == nil && core.IsPractice(a) {
		return store.Approval{}, store.ErrNotFound
	}
	return a, err
}

// hidden answers a practice request's id on the agent's side exactly as
// an unknown id, and passes every other ticket and error through.
func hidden(op string, a store.Approval, err error) error {
	if err == nil && core.IsPractice(a) {
		return core.TicketErr(op, store.ErrNotFound)
	}
	return err
}

// practiceArgs returns args with one attack-class change and its class:
// the first e-mail address (by key, depth first) with a look-alike
// registrable domain, or else the first number ten times larger; false
// when args hold neither.
func practiceArgs(raw json.RawMessage) (json.RawMessage, string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", false
	}
	for _, class := range []string{audit.PracticeLookalikeDomain, audit.PracticeAmountTenfold} {
		if w, ok := change(v, class, 0); ok {
			out, err := json.Marshal(w)
			if err != nil {
				return nil, "", false
			}
			return out, class, true
		}
	}
	return nil, "", false
}

// maxPracticeDepth bounds the walk of change; canon bounds the arguments
// themselves.
const maxPracticeDepth = 16

// change returns v with its first value of class changed, and whether
// one was.
func change(v any, class string, depth int) (any, bool) {
	if depth > maxPracticeDepth {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if w, ok := change(x[k], class, depth+1); ok {
				y := make(map[string]any, len(x))
				for k2, v2 := range x {
					y[k2] = v2
				}
				y[k] = w
				return y, true
			}
		}
	case []any:
		for i, e := range x {
			if w, ok := change(e, class, depth+1); ok {
				y := slices.Clone(x)
				y[i] = w
				return y, true
			}
		}
	case string:
		if class == audit.PracticeLookalikeDomain {
			return lookalikeAddress(x)
		}
	case json.Number:
		if class == audit.PracticeAmountTenfold {
			return tenfold(x)
		}
	}
	return v, false
}

// lookalikeAddress returns e-mail address s with its registrable
// domain's label swapped for a look-alike.
func lookalikeAddress(s string) (string, bool) {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return s, false
	}
	labels := strings.Split(s[at+1:], ".")
	i := registrableLabel(labels)
	l := labels[i]
	switch {
	case strings.Contains(l, "m"):
		l = strings.Replace(l, "m", "rn", 1)
	case strings.Contains(l, "l"):
		l = strings.Replace(l, "l", "1", 1)
	case strings.Contains(l, "o"):
		l = strings.Replace(l, "o", "0", 1)
	case strings.Contains(l, "i"):
		l = strings.Replace(l, "i", "1", 1)
	case l != "":
		l = l[:1] + l
	default:
		return s, false
	}
	labels[i] = l
	return s[:at+1] + strings.Join(labels, "."), true
}

// registrableLabel is the index in labels (a host split at its dots) of
// the label the registrable domain adds to the public suffix: "acme" in
// mail.acme.co.uk, so that the look-alike is of the name a person
// reads (acrne.co.uk), not of the suffix (acme.c0.uk). A root dot (an
// empty last label) is not a label; a host the public-suffix list cannot
// place falls back to the label before the last.
func registrableLabel(labels []string) int {
	n := len(labels)
	if n > 1 && labels[n-1] == "" {
		n--
	}
	host := strings.ToLower(strings.Join(labels[:n], "."))
	if reg, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		if i := n - 1 - strings.Count(reg, "."); i >= 0 {
			return i
		}
	}
	return max(n-2, 0)
}

// tenfold returns n times ten, written with no more decimals than n.
func tenfold(n json.Number) (json.Number, bool) {
	s := n.String()
	if len(s) > 64 {
		return n, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() <= 0 {
		return n, false
	}
	r.Mul(r, big.NewRat(10, 1))
	if r.IsInt() {
		return json.Number(r.Num().String()), true
	}
	decimals := 0
	if dot := strings.IndexByte(s, '.'); dot >= 0 && !strings.ContainsAny(s, "eE") {
		decimals = len(s) - dot - 1
	}
	if decimals == 0 {
		return n, false
	}
	out := strings.TrimRight(r.FloatString(decimals), "0")
	return json.Number(strings.TrimSuffix(out, ".")), true
}
