package grant

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
)

// Kind is what a [Grant] covers.
type Kind string

// The kinds of grant.
const (
	// KindExact covers one effect, by its digest.
	KindExact Kind = "exact"
	// KindPlan covers a set of effects, by their digests, each once: the
	// approved plan "refund these three orders for these amounts".
	KindPlan Kind = "plan"
	// KindTemplate covers the effects of one tool, for one user, whose
	// every argument a [Rule] pins or bounds.
	KindTemplate Kind = "template"
)

// Bounds of a grant, checked by [Grant.Validate].
const (
	MaxPlanSteps = 256  // digests in a plan
	MaxRules     = 1024 // rules in a template
	MaxChoices   = 1024 // values in one rule's OneOf or Domains
	// MaxPathBytes bounds a rule's path, escaped as written. An argument
	// whose pointer is longer is covered only by a rule on a value
	// enclosing it.
	MaxPathBytes = 4096
	// MaxPathTokens bounds the reference tokens of a rule's path: canon
	// refuses arguments nested deeper, so a longer path names nothing.
	MaxPathTokens = canon.DefaultMaxDepth
)

// Grant is a delegated approval: what a user approved once so that later
// calls need not ask again. It covers only what it names (P6): exact and
// plan grants name whole effects by digest; a template names one tool and a
// rule for every argument, and an argument without a rule is not covered.
//
// A Grant is stored as the JSON of [Grant.Marshal] (store.Grant.Spec) and
// read back with [Parse].
type Grant struct {
	Kind Kind `json:"kind"`
	// Digests are the granted effects' digests: exactly one for
	// KindExact, one or more distinct ones for KindPlan, none otherwise.
	Digests []canon.Digest `json:"digests,omitempty"`
	// Template is set for KindTemplate only.
	Template *Template `json:"template,omitempty"`
}

// Template is a constrained grant: it covers an effect when the tool,
// audience and principal are the ones it names and every argument is
// covered by exactly one of its Args rules, with no argument left over and
// no rule left unused. A template never covers an effect with references
// (their content is not an argument a rule can pin; use an exact or plan
// grant) nor one made through delegations. The task, step and policy
// version are not pinned: a template outlives one task.
type Template struct {
	Tool     string `json:"tool"`
	Audience string `json:"audience"` // the executor, compared exactly (empty is a value)
	User     string `json:"user"`     // the principal's user; a grant for one user never covers another
	Agent    string `json:"agent,omitempty"`
	Args     []Rule `json:"args"`
}

// Rule covers the argument at Path, a JSON pointer (RFC 6901) into the
// arguments: "/to", "/items/0/amount", "" for the whole arguments. A path
// pins the containers it passes through: a token in array-index form ("0",
// "17": digits, no leading zero) names an array element, any other token an
// object member. So "/items/0" covers the "A" of {"items":["A"]} but never
// that of {"items":{"0":"A"}}: an object member whose name is an array
// index is covered only by a rule on a value enclosing it. A path has at
// most [MaxPathBytes] bytes and [MaxPathTokens] tokens. Exactly one
// constraint is set:
//
//   - Equals pins the value, compared as canonical JSON: strings byte for
//     byte, numbers as exact decimals (120 and 120.0 are equal, 120 and
//     1200 or 120.001 are not), objects and arrays as a whole.
//   - OneOf pins one of several values, compared as Equals.
//   - Min and/or Max bound a number, inclusive, compared as exact decimals.
//   - Domains bounds a string to an e-mail address or host name whose
//     domain is one of these, exactly (lower-case ASCII; no subdomains).
//     An address's local part is a plain dot-atom without "%" or "!",
//     which would relay the mail on to another domain.
//   - MaxBytes bounds a string's length in bytes: any text, declared.
//
// A rule on an object or array covers everything inside it only with
// Equals or OneOf; the other constraints apply to numbers and strings.
type Rule struct {
	Path     string            `json:"path"`
	Equals   json.RawMessage   `json:"equals,omitempty"`
	OneOf    []json.RawMessage `json:"one_of,omitempty"`
	Min      json.Number       `json:"min,omitempty"`
	Max      json.Number       `json:"max,omitempty"`
	Domains  []string          `json:"domains,omitempty"`
	MaxBytes int               `json:"max_bytes,omitempty"`
}

// Exact returns a grant of the one effect with digest d.
func Exact(d canon.Digest) Grant { return Grant{Kind: KindExact, Digests: []canon.Digest{d}} }

// Plan returns a grant of the effects with digests ds, each usable once.
func Plan(ds ...canon.Digest) Grant {
	return Grant{Kind: KindPlan, Digests: append([]canon.Digest(nil), ds...)}
}

// Pin returns a rule pinning the argument at path to v, as encoding/json
// writes it. A v that does not encode gives a rule [Grant.Validate]
// refuses.
func Pin(path string, v any) Rule {
	b, err := json.Marshal(v)
	if err != nil {
		b = nil
	}
	return Rule{Path: path, Equals: b}
}

// Range returns a rule bounding the number at path to [min, max]; an empty
// bound is open.
func Range(path, min, max string) Rule {
	return Rule{Path: path, Min: json.Number(min), Max: json.Number(max)}
}

// InDomains returns a rule bounding the address or host name at path to
// the domains.
func InDomains(path string, domains ...string) Rule {
	return Rule{Path: path, Domains: append([]string(nil), domains...)}
}

// Text returns a rule covering any string of at most maxBytes at path.
func Text(path string, maxBytes int) Rule { return Rule{Path: path, MaxBytes: maxBytes} }

// Validate reports whether g is well formed, with an error wrapping
// [ErrInvalidGrant] that never quotes values.
func (g Grant) Validate() error {
	_, err := compile(g)
	return err
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidGrant}, a...)...)
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
