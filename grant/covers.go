package grant

import (
	"fmt"

	"github.com/agentstepup/asu/canon"
)

// Covers reports whether g covers the effect e. It fails closed: a
// malformed grant is an error wrapping [ErrInvalidGrant], an effect canon
// cannot hash faithfully an error wrapping the canon sentinel, and with an
// error the Coverage is never Covered.
//
// An exact or plan grant covers e when e's digest is one of its digests. A
// template covers e when the tool, the audience and the principal's user
// (and agent, if pinned) are the template's, e has no references and no
// delegations, and every argument is covered by a rule, as [Template]
// describes. The answer names the first reason found: the call's fields in
// the order above, then the arguments in canonical order, then the first
// rule whose argument is missing.
func Covers(g Grant, e canon.Effect) (Coverage, error) {
	c, err := compile(g)
	if err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: %w", err)
	}
	return c.covers(e)
}

func (c *compiled) covers(e canon.Effect) (Coverage, error) {
	if c.kind != KindTemplate {
		d, err := e.Digest()
		if err != nil {
			return Coverage{}, fmt.Errorf("grant: covers: effect: %w", err)
		}
		for _, granted := range c.digests {
			if granted.Equal(d) {
				return covered(), nil
			}
		}
		return notCovered(ReasonDigest, ""), nil
	}
	// Canonical checks every field and gives canonical arguments.
	if _, err := e.Canonical(); err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: effect: %w", err)
	}
	args, err := canon.Canonicalize(e.Args)
	if err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: effect: %w", err)
	}
	t := c.tmpl
	switch {
	case e.Tool != t.Tool:
		return notCovered(ReasonTool, ""), nil
	case e.Audience != t.Audience:
		return notCovered(ReasonAudience, ""), nil
	case e.Principal.User != t.User:
		return notCovered(ReasonUser, ""), nil
	case t.Agent != "" && e.Principal.Agent != t.Agent:
		return notCovered(ReasonAgent, ""), nil
	case len(e.Principal.Delegations) != 0:
		return notCovered(ReasonDelegated, ""), nil
	case len(e.Refs) != 0:
		return notCovered(ReasonReferences, ""), nil
	}
	root, err := parseTree(args)
	if err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: effect: %w", canon.ErrSyntax)
	}
	w := walker{c: c, used: make(map[string]bool, len(c.rules))}
	if cov := w.walk(root, ""); !cov.Covered {
		return cov, nil
	}
	for _, p := range c.order {
		if !w.used[p] {
			return notCovered(ReasonMissing, p), nil
		}
	}
	return covered(), nil
}

// walker visits the arguments, checking each against the rule at its path
// and descending where there is none.
type walker struct {
	c    *compiled
	used map[string]bool
}

func (w *walker) walk(n *node, path string) Coverage {
	if r := w.c.rules[path]; r != nil {
		w.used[path] = true
		return r.check(n, path)
	}
	switch {
	case n.kind == 'o' && path == "" && len(n.elems) == 0:
		return covered() // no arguments at all
	case (n.kind == 'o' || n.kind == 'a') && len(n.elems) > 0:
		for i, sub := range n.elems {
			if cov := w.walk(sub, child(path, n, i)); !cov.Covered {
				return cov
			}
		}
		return covered()
	}
	// A scalar, or an empty object or array, with no rule.
	return notCovered(ReasonUnpinned, path)
}

// check reports whether the rule covers the value n at path.
func (r *rule) check(n *node, path string) Coverage {
	switch {
	case r.values != nil:
		for _, v := range r.values {
			if equal(n, v) {
				return covered()
			}
		}
		return notCovered(ReasonValue, path)
	case r.domains != nil:
		if n.kind != 's' {
			return notCovered(ReasonType, path)
		}
		if d, ok := domainOf(n.text); !ok || !r.domains[d] {
			return notCovered(ReasonBounds, path)
		}
		return covered()
	case r.maxBytes != 0:
		if n.kind != 's' {
			return notCovered(ReasonType, path)
		}
		if len(n.text) > r.maxBytes {
			return notCovered(ReasonBounds, path)
		}
		return covered()
	}
	if n.kind != 'n' {
		return notCovered(ReasonType, path)
	}
	v := decimal(n.text)
	if v == nil || (r.min != nil && v.Cmp(r.min) < 0) || (r.max != nil && v.Cmp(r.max) > 0) {
		return notCovered(ReasonBounds, path)
	}
	return covered()
}
