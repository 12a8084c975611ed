package grant

import (
	"github.com/agentstepup/asu/canon"
)

// compiled is a validated grant, ready to check effects against.
type compiled struct {
	kind    Kind
	digests []canon.Digest
	tmpl    *Template
	rules   map[string]*rule // by path
	order   []string         // rule paths as the template lists them
	work    int              // bytes hashed checking the rule paths (see ruleTree)
}

// rule is a validated [Rule].
type rule struct {
	values   []canon.Value // Equals (one) or OneOf
	min, max string        // canonical number texts, "" for no bound
	domains  map[string]bool
	maxBytes int
}

func compile(g Grant) (*compiled, error) {
	c := &compiled{kind: g.Kind}
	switch g.Kind {
	case KindExact, KindPlan:
		if g.Template != nil {
			return nil, invalid("%s grant with a template", g.Kind)
		}
		if err := checkDigests(g); err != nil {
			return nil, err
		}
		c.digests = g.Digests
		return c, nil
	case KindTemplate:
		if len(g.Digests) != 0 || g.Template == nil {
			return nil, invalid("a template grant has a template and no digests")
		}
		return c, c.compileTemplate(g.Template)
	}
	return nil, invalid("unknown kind")
}

func checkDigests(g Grant) error {
	switch {
	case g.Kind == KindExact && len(g.Digests) != 1:
		return invalid("an exact grant has one digest")
	case g.Kind == KindPlan && (len(g.Digests) == 0 || len(g.Digests) > MaxPlanSteps):
		return invalid("a plan has 1 to %d digests", MaxPlanSteps)
	}
	seen := make(map[canon.Digest]bool, len(g.Digests))
	for _, d := range g.Digests {
		if d.IsZero() {
			return invalid("zero digest")
		}
		if seen[d] {
			return invalid("repeated digest")
		}
		seen[d] = true
	}
	return nil
}

func (c *compiled) compileTemplate(t *Template) error {
	switch {
	case t.Tool == "" || t.User == "":
		return invalid("a template names a tool and a user")
	case !validUTF8(t.Tool, t.Audience, t.User, t.Agent):
		return invalid("template field is not UTF-8")
	case len(t.Args) > MaxRules:
		return invalid("more than %d rules", MaxRules)
	}
	c.tmpl = t
	c.rules = make(map[string]*rule, len(t.Args))
	tree := newRuleTree(len(t.Args))
	for i, r := range t.Args {
		switch {
		case !utf8Pointer(r.Path):
			return invalid("rule %d: path is not a JSON pointer", i)
		case len(r.Path) > MaxPathBytes || tokens(r.Path) > MaxPathTokens:
			return invalid("rule %d: path is over %d bytes or %d tokens", i, MaxPathBytes, MaxPathTokens)
		}
		// A rule inside another rule's value would make coverage ambiguous.
		if why := tree.add(r.Path); why != "" {
			return invalid("rule %d: %v", i, why)
		}
		cr, err := compileRule(r)
		if err != nil {
			return invalid("rule %d: %v", i, err)
		}
		c.rules[r.Path] = cr
		c.order = append(c.order, r.Path)
	}
	c.work = tree.work
	return nil
}

func utf8Pointer(p string) bool { return validUTF8(p) && validPointer(p) }

// ruleError is a reason a rule is malformed; it never quotes values.
type ruleError string

func (e ruleError) Error() string { return string(e) }

func compileRule(r Rule) (*rule, error) {
	kinds := 0
	for _, set := range []bool{r.Equals != nil, r.OneOf != nil, r.Min != "" || r.Max != "",
		r.Domains != nil, r.MaxBytes != 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, ruleError("a rule sets exactly one of equals, one_of, min/max, domains, max_bytes")
	}
	cr := &rule{}
	switch {
	case r.Equals != nil:
		v, err := value(r.Equals)
		if err != nil {
			return nil, err
		}
		cr.values = []canon.Value{v}
	case r.OneOf != nil:
		if len(r.OneOf) == 0 || len(r.OneOf) > MaxChoices {
			return nil, ruleError("one_of has 1 to 1024 values")
		}
		for _, raw := range r.OneOf {
			v, err := value(raw)
			if err != nil {
				return nil, err
			}
			cr.values = append(cr.values, v)
		}
	case r.Domains != nil:
		if len(r.Domains) == 0 || len(r.Domains) > MaxChoices {
			return nil, ruleError("domains has 1 to 1024 names")
		}
		cr.domains = make(map[string]bool, len(r.Domains))
		for _, d := range r.Domains {
			if !hostName(d) || lower(d) != d {
				return nil, ruleError("domains holds a name that is not a lower-case ASCII host name")
			}
			cr.domains[d] = true
		}
	case r.MaxBytes != 0:
		if r.MaxBytes < 0 {
			return nil, ruleError("max_bytes is negative")
		}
		cr.maxBytes = r.MaxBytes
	default:
		var err error
		if cr.min, err = bound(string(r.Min)); err != nil {
			return nil, err
		}
		if cr.max, err = bound(string(r.Max)); err != nil {
			return nil, err
		}
		if cr.min != "" && cr.max != "" {
			if c, err := canon.CompareDecimal(cr.min, cr.max); err != nil || c > 0 {
				return nil, ruleError("min is above max")
			}
		}
	}
	return cr, nil
}

// value parses a pinned value after canon has checked it can be hashed
// faithfully, so its numbers are canonical like the effect's.
func value(raw []byte) (canon.Value, error) {
	c, err := canon.Canonicalize(raw)
	if err != nil {
		return canon.Value{}, ruleError("a pinned value is not canonical JSON")
	}
	v, err := canon.ParseValue(c)
	if err != nil {
		return canon.Value{}, ruleError("a pinned value is not canonical JSON")
	}
	return v, nil
}

// bound parses a min or max: empty for none, else a JSON number that canon
// accepts, as its canonical text.
func bound(text string) (string, error) {
	if text == "" {
		return "", nil
	}
	v, err := value([]byte(text))
	if err != nil || v.Kind() != canon.KindNumber {
		return "", ruleError("min and max are JSON numbers")
	}
	return v.Number(), nil
}
