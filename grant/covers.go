package grant

import (
	"fmt"
	"strconv"

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
	s, err := canon.Seal(e)
	if err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: effect: %w", err)
	}
	return CoversSealed(g, s)
}

// CoversSealed is [Covers] for an effect already sealed, which it reads
// without canonicalizing anything again.
func CoversSealed(g Grant, s canon.Sealed) (Coverage, error) {
	if s.IsZero() {
		return Coverage{}, fmt.Errorf("grant: covers: effect: %w", canon.ErrNotObject)
	}
	c, err := compile(g)
	if err != nil {
		return Coverage{}, fmt.Errorf("grant: covers: %w", err)
	}
	return c.covers(s), nil
}

func (c *compiled) covers(s canon.Sealed) Coverage {
	if c.kind != KindTemplate {
		d := s.Digest()
		for _, granted := range c.digests {
			if granted.Equal(d) {
				return covered()
			}
		}
		return notCovered(ReasonDigest, "")
	}
	e := s.Effect()
	t := c.tmpl
	switch {
	case e.Tool != t.Tool:
		return notCovered(ReasonTool, "")
	case e.Audience != t.Audience:
		return notCovered(ReasonAudience, "")
	case e.Principal.User != t.User:
		return notCovered(ReasonUser, "")
	case t.Agent != "" && e.Principal.Agent != t.Agent:
		return notCovered(ReasonAgent, "")
	case len(e.Principal.Delegations) != 0:
		return notCovered(ReasonDelegated, "")
	case len(e.Refs) != 0:
		return notCovered(ReasonReferences, "")
	}
	w := walker{c: c, used: make(map[string]bool, len(c.rules))}
	if cov := w.walk(s.Args(), "", true); !cov.Covered {
		return cov
	}
	for _, p := range c.order {
		if !w.used[p] {
			return notCovered(ReasonMissing, p)
		}
	}
	return covered()
}

// walker visits the arguments, checking each against the rule at its path
// and descending where there is none.
type walker struct {
	c    *compiled
	used map[string]bool
}

// walk checks the value n at path. ruled is false below an object member
// no rule path can name: one whose name is an array index (a rule path
// token in that form addresses an array element, so a rule written for
// ["A"] never covers {"0":"A"}), or past [MaxPathBytes].
func (w *walker) walk(n canon.Value, path string, ruled bool) Coverage {
	if ruled = ruled && len(path) <= MaxPathBytes; ruled {
		if r := w.c.rules[path]; r != nil {
			w.used[path] = true
			return r.check(n, path)
		}
	}
	switch k := n.Kind(); {
	case k == canon.KindObject && path == "" && n.Len() == 0:
		return covered() // no arguments at all
	case !ruled:
		// Nothing at or below path is covered.
	case k == canon.KindObject && n.Len() > 0:
		for key, sub := range n.Members() {
			if cov := w.walk(sub, path+"/"+escapeToken(key), !arrayIndex(key)); !cov.Covered {
				return cov
			}
		}
		return covered()
	case k == canon.KindArray && n.Len() > 0:
		for i, sub := range n.Elems() {
			if cov := w.walk(sub, path+"/"+strconv.Itoa(i), true); !cov.Covered {
				return cov
			}
		}
		return covered()
	}
	// A scalar, or an empty object or array, with no rule; or a value no
	// rule can name.
	return notCovered(ReasonUnpinned, path)
}

// check reports whether the rule covers the value n at path.
func (r *rule) check(n canon.Value, path string) Coverage {
	switch {
	case r.values != nil:
		for _, v := range r.values {
			if n.Equal(v) {
				return covered()
			}
		}
		return notCovered(ReasonValue, path)
	case r.domains != nil:
		if n.Kind() != canon.KindString {
			return notCovered(ReasonType, path)
		}
		if d, ok := domainOf(n.String()); !ok || !r.domains[d] {
			return notCovered(ReasonBounds, path)
		}
		return covered()
	case r.maxBytes != 0:
		if n.Kind() != canon.KindString {
			return notCovered(ReasonType, path)
		}
		if len(n.String()) > r.maxBytes {
			return notCovered(ReasonBounds, path)
		}
		return covered()
	}
	if n.Kind() != canon.KindNumber {
		return notCovered(ReasonType, path)
	}
	if r.min != "" {
		if c, err := canon.CompareDecimal(n.Number(), r.min); err != nil || c < 0 {
			return notCovered(ReasonBounds, path)
		}
	}
	if r.max != "" {
		if c, err := canon.CompareDecimal(n.Number(), r.max); err != nil || c > 0 {
			return notCovered(ReasonBounds, path)
		}
	}
	return covered()
}
