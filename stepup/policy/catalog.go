package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// Tool is one catalog entry: what the tool is, how dangerous it is, and the
// checks its arguments must pass. The catalog, not the tool's own
// description, is what the policy reads.
type Tool struct {
	// Name is what calls use, e.g. "send_email".
	Name string
	// Title is the human name shown on the card, e.g. "Send e-mail".
	Title string
	// Class is the effect class you declare: card.ClassRead,
	// card.ClassReversible, card.ClassExternal or card.ClassIrreversible.
	Class string
	// Schema is a JSON Schema the arguments must satisfy. Nil accepts any
	// object.
	Schema json.RawMessage
	// Limits are checks in code, run after the schema; the first failing
	// one denies the call with its reason.
	Limits []Limit
	// Refs maps an argument name to the kind of reference its string value
	// names ("file", "url"); the content is hashed into the digest.
	Refs map[string]string
	// Unattended lets an external or irreversible call run without approval
	// while the session is untainted. Read and reversible calls are always
	// unattended.
	Unattended bool
	// Approvers names the approver group (the gate's WithApproverGroup); empty
	// means the user the call runs on behalf of, and nobody else.
	Approvers string
	// Quorum is how many distinct people must approve a call (the rule of
	// two is 2): each signs the same ticket with their own passkey, and
	// the call runs after the last. Zero or one means one approver. It
	// needs an approver group with at least that many members.
	Quorum int
	// Timeout bounds the approval; see [Timeout].
	Timeout plug.Timeout
	// Hints lay out the card.
	Hints card.Hints
	// Trusted lists domains the integrator trusts for this tool (the
	// domains of an AllowDomains limit, known partners): the card flags
	// look-alikes of them, such as exarnple.com for example.com.
	Trusted []string
	// Description is the tool server's own description. It is untrusted
	// (a tool server may be hostile) and the card shows it only in the
	// region written by others.
	Description string
	// Audience names the executor; empty means the tool name.
	Audience string
}

// RequireQuorum returns tools with Quorum set to k for every tool of
// effect class class that needs approval: one line gives irreversible
// effects the rule of two,
//
//	tools = policy.RequireQuorum(card.ClassIrreversible, 2, tools...)
//
// Each such tool must name an approver group (Approvers) with at least k
// members, or the gate denies its calls: nobody could complete them.
func RequireQuorum(class string, k int, tools ...Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		if t.Class == class {
			t.Quorum = k
		}
		out[i] = t
	}
	return out
}

// Limit is a check in code on a call's arguments: the canonical argument
// object as a canon.Value, whose numbers keep their exact decimal text
// (compare them with canon.CompareDecimal, never through float64). It
// returns the empty string to pass, or the reason to deny. Reasons go to
// the model and the audit log: name the rule, not the value.
type Limit func(args canon.Value) (reason string)

// MaxAmount denies calls whose numeric argument arg exceeds max, a
// decimal such as "500" or "19.99". The comparison is exact: the argument's
// decimal text against max, never through float64, so 500.0000000000001
// is over a limit of 500. A max that is not a decimal denies every call
// (fail closed), as does an argument that is not a number.
func MaxAmount(arg, max string) Limit {
	_, err := canon.CompareDecimal(max, max)
	valid := err == nil
	return func(args canon.Value) string {
		v, present := args.Get(arg)
		if !present {
			return ""
		}
		if !valid {
			return "the per-call limit is misconfigured"
		}
		if v.Kind() != canon.KindNumber {
			return "argument " + arg + " is not a number"
		}
		if c, err := canon.CompareDecimal(v.Number(), max); err != nil || c > 0 {
			return "over the per-call limit"
		}
		return ""
	}
}

// AllowDomains denies calls whose string argument arg is an address (or
// list of addresses) outside the given domains. Subdomains do not match.
// Each string must be one plain ASCII address ("local@domain") or host
// name: a list in one string, a display name, a second "@", a quoted or
// routed local part ("a%evil.com@example.com", "evil!a@example.com") is
// denied, not guessed at. An entry of domains that is not a host name
// makes the limit deny every call (fail closed).
func AllowDomains(arg string, domains ...string) Limit {
	allowed := make(map[string]bool, len(domains))
	valid := len(domains) > 0
	for _, d := range domains {
		d = strings.ToLower(d)
		if !hostName(d) {
			valid = false
		}
		allowed[d] = true
	}
	return func(args canon.Value) string {
		v, present := args.Get(arg)
		if !present || v.Kind() == canon.KindNull {
			return ""
		}
		values := []canon.Value{v}
		if v.Kind() == canon.KindArray {
			values = values[:0]
			for _, e := range v.Elems() {
				values = append(values, e)
			}
		}
		if !valid {
			return "the recipient allowlist is misconfigured"
		}
		for _, v := range values {
			if v.Kind() != canon.KindString {
				return "argument " + arg + " is not an address"
			}
			domain, ok := addressDomain(v.String())
			if !ok || !allowed[domain] {
				return "recipient domain not on the allowlist"
			}
		}
		return ""
	}
}

// addressDomain returns the lower-cased domain of s, one plain address
// ("local@domain": an RFC 5321 dot-atom local part without the routing
// characters % and !) or a bare host name, or false. Anything else (a
// list, a display name, a quoted local part, a second "@", spaces) is not
// read: its last "@" may follow a recipient outside the allowlist.
func addressDomain(s string) (string, bool) {
	local, host, found := strings.Cut(s, "@")
	if !found {
		local, host = "x", s
	}
	if len(local) == 0 || len(local) > 64 || local[0] == '.' || local[len(local)-1] == '.' ||
		strings.Contains(local, "..") {
		return "", false
	}
	for i := 0; i < len(local); i++ {
		if c := local[i]; !(alnum(c) || strings.IndexByte(".#$&'*+/=?^_`{|}~-", c) >= 0) {
			return "", false
		}
	}
	host = strings.ToLower(host)
	if !hostName(host) {
		return "", false
	}
	return host, true
}

// hostName reports whether h is a lower-case ASCII host name: dot-separated
// labels of letters, digits and inner hyphens, 1 to 63 bytes each, 253 in
// all, with at least one dot.
func hostName(h string) bool {
	if len(h) == 0 || len(h) > 253 || !strings.Contains(h, ".") {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// Catalog is the default [Policy]: deny by default (a tool not in the
// catalog is denied), argument schemas and limits in code, effect classes
// you declare, taint-aware (once the session saw untrusted content,
// external and irreversible calls need approval), fail closed.
type Catalog struct {
	version string
	tools   map[string]*catalogTool
}

type catalogTool struct {
	Tool
	schema *jsonschema.Schema
}

// NewCatalog compiles the tools' schemas and checks every entry up front.
// version is recorded with every decision; change it with every edit. The
// catalog is immutable: it copies every map and slice of tools, and each
// Decision it returns holds copies too.
func NewCatalog(version string, tools ...Tool) (*Catalog, error) {
	if version == "" {
		return nil, fmt.Errorf("%w: catalog needs a policy version", stepup.ErrConfig)
	}
	c := &Catalog{version: version, tools: make(map[string]*catalogTool, len(tools))}
	for _, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("%w: tool without a name", stepup.ErrConfig)
		}
		if plug.ReservedTool(t.Name) || plug.ReservedTool(t.Timeout.Alternative) {
			return nil, fmt.Errorf("%w: tool names starting with %q are the gate's own", stepup.ErrConfig, plug.ReservedToolPrefix)
		}
		if _, dup := c.tools[t.Name]; dup {
			return nil, fmt.Errorf("%w: tool %q listed twice", stepup.ErrConfig, t.Name)
		}
		switch t.Class {
		case card.ClassRead, card.ClassReversible, card.ClassExternal, card.ClassIrreversible:
		default:
			return nil, fmt.Errorf("%w: tool %q has unknown effect class %q", stepup.ErrConfig, t.Name, t.Class)
		}
		if t.Quorum < 0 || t.Quorum > store.MaxQuorum {
			return nil, fmt.Errorf("%w: tool %q needs a quorum from 1 to %d", stepup.ErrConfig, t.Name, store.MaxQuorum)
		}
		if t.Quorum > 1 && t.Approvers == "" {
			return nil, fmt.Errorf("%w: tool %q needs %d approvers but names no approver group", stepup.ErrConfig, t.Name, t.Quorum)
		}
		switch t.Timeout.Outcome {
		case "", plug.OutcomeCancel:
		case plug.OutcomeEscalate:
			if t.Timeout.EscalateTo == "" {
				return nil, fmt.Errorf("%w: tool %q escalates to no group", stepup.ErrConfig, t.Name)
			}
		case plug.OutcomeAlternative:
			if t.Timeout.Alternative == "" || t.Timeout.Alternative == t.Name {
				return nil, fmt.Errorf("%w: tool %q names no safe alternative", stepup.ErrConfig, t.Name)
			}
		default:
			return nil, fmt.Errorf("%w: tool %q has unknown timeout outcome", stepup.ErrConfig, t.Name)
		}
		if err := (card.Renderer{}).CheckContext(card.Context{Title: t.Title, Class: t.Class, Hints: t.Hints,
			Trusted: t.Trusted}); err != nil {
			return nil, fmt.Errorf("%w: tool %q: %v", stepup.ErrConfig, t.Name, err)
		}
		if t.Timeout.After < 0 {
			return nil, fmt.Errorf("%w: tool %q has a negative timeout", stepup.ErrConfig, t.Name)
		}
		ct := &catalogTool{Tool: cloneTool(t)}
		if t.Schema != nil {
			s, err := compileSchema(t.Name, t.Schema)
			if err != nil {
				return nil, err
			}
			ct.schema = s
		}
		c.tools[t.Name] = ct
	}
	for _, t := range c.tools {
		if alt := t.Timeout.Alternative; alt != "" {
			at, ok := c.tools[alt]
			if !ok {
				return nil, fmt.Errorf("%w: tool %q names unknown alternative %q", stepup.ErrConfig, t.Name, alt)
			}
			if at.Class != card.ClassRead && at.Class != card.ClassReversible {
				return nil, fmt.Errorf("%w: alternative %q of %q is not read or reversible", stepup.ErrConfig, alt, t.Name)
			}
		}
	}
	return c, nil
}

// cloneTool copies every map and slice of t, so a catalog shares nothing
// with its caller: editing a Tool after NewCatalog changes no decision.
func cloneTool(t Tool) Tool {
	t.Schema = bytes.Clone(t.Schema)
	t.Limits = slices.Clone(t.Limits)
	t.Refs = maps.Clone(t.Refs)
	t.Trusted = slices.Clone(t.Trusted)
	t.Hints = cloneHints(t.Hints)
	return t
}

func cloneHints(h card.Hints) card.Hints {
	h.Labels = maps.Clone(h.Labels)
	h.Order = slices.Clone(h.Order)
	h.Units = maps.Clone(h.Units)
	h.Domains = slices.Clone(h.Domains)
	return h
}

func compileSchema(tool string, schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%w: schema of %q is not JSON", stepup.ErrConfig, tool)
	}
	url := "asu:catalog/" + tool + ".json"
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: schema of %q: %v", stepup.ErrConfig, tool, err)
	}
	s, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: schema of %q does not compile: %v", stepup.ErrConfig, tool, err)
	}
	g := newWorkGraph(s)
	if g.resolvesDynamically() {
		extra, err := dynamicAnchors(tool, comp, url, doc)
		if err != nil {
			return nil, err
		}
		for _, a := range extra {
			g.id(a)
		}
		g.link()
	}
	if err := checkSchemaWork(tool, s, g); err != nil {
		return nil, err
	}
	return s, nil
}

// noLoader refuses every external reference: a schema is self-contained,
// and compiling it never reaches the file system or network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not loaded")
}

// Version returns the catalog's policy version.
func (c *Catalog) Version() string { return c.version }

// Route implements [Router].
func (c *Catalog) Route(tool, policyVersion string) (plug.Route, bool) {
	t, ok := c.tools[tool]
	if !ok || policyVersion != c.version {
		return plug.Route{}, false
	}
	return plug.Route{Approvers: t.Approvers, Timeout: t.Timeout, Quorum: t.Quorum}, true
}

// Decide implements [Policy].
func (c *Catalog) Decide(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return c.decide(p, false)
}

// DecideParsed implements [plug.ParsedDecider]: it decides on
// p.Parsed alone, as Decide decides when p.Args is their text.
func (c *Catalog) DecideParsed(ctx context.Context, p plug.Proposal) (plug.Decision, error) {
	return c.decide(p, true)
}

// decide is Decide, or with parsedOnly DecideParsed.
func (c *Catalog) decide(p plug.Proposal, parsedOnly bool) (plug.Decision, error) {
	d := plug.Decision{Verdict: plug.Deny, PolicyVersion: c.version}
	t, ok := c.tools[p.Tool]
	if !ok {
		d.Reason = "unknown tool"
		return d, nil
	}
	d.Class, d.Title, d.Hints, d.Approvers = t.Class, t.Title, plug.Hints(cloneHints(t.Hints)), t.Approvers
	d.Quorum = t.Quorum
	d.Trusted, d.Description = slices.Clone(t.Trusted), t.Description
	d.Timeout = t.Timeout
	d.Audience = t.Audience
	if d.Audience == "" {
		d.Audience = t.Name
	}
	// The gate hands the arguments parsed (p.Parsed); another caller of
	// Decide may hand text only, or text not in canonical form.
	args, err := p.Parsed, error(nil)
	if !parsedOnly && (args.Kind() != canon.KindObject || args.Canonical() != string(p.Args)) {
		args, err = canon.ParseValue(p.Args)
		if errors.Is(err, canon.ErrNotCanonical) {
			if c, cerr := canon.Canonicalize(p.Args); cerr == nil {
				args, err = canon.ParseValue(c)
			}
		}
	}
	// The schema is checked only on arguments canon parsed: the bound on
	// its work (see [maxApplications]) holds to canon's nesting limit.
	if t.schema != nil {
		if err != nil {
			if !json.Valid(p.Args) {
				d.Reason = "arguments are not JSON"
				return d, nil
			}
		} else if inst, ok := instance(args, 0); !ok {
			d.Reason = "arguments nest too deeply for the tool's schema"
			return d, nil
		} else if err := t.schema.Validate(inst); err != nil {
			d.Reason = "arguments do not match the tool's schema"
			return d, nil
		}
	}
	if err != nil || args.Kind() != canon.KindObject {
		d.Reason = "arguments must be a canonical JSON object"
		return d, nil
	}
	for _, l := range t.Limits {
		if reason := l(args); reason != "" {
			d.Reason = reason
			return d, nil
		}
	}
	refs, reason := t.refs(args)
	if reason != "" {
		d.Reason = reason
		return d, nil
	}
	d.Refs = refs
	switch {
	case t.Class == card.ClassRead || t.Class == card.ClassReversible:
		d.Verdict, d.Reason = plug.Allow, t.Class+" effect"
	case len(p.Taint) > 0:
		d.Verdict, d.Reason = plug.NeedsApproval, t.Class+" effect after untrusted content"
	case t.Unattended:
		d.Verdict, d.Reason = plug.Allow, t.Class+" effect allowed unattended"
	default:
		d.Verdict, d.Reason = plug.NeedsApproval, t.Class+" effect"
	}
	return d, nil
}

// refs lists the references the arguments name, in argument-name order.
func (t *catalogTool) refs(args canon.Value) ([]canon.Ref, string) {
	names := make([]string, 0, len(t.Refs))
	for name := range t.Refs {
		names = append(names, name)
	}
	slices.Sort(names)
	var refs []canon.Ref
	for _, name := range names {
		v, ok := args.Get(name)
		if !ok {
			continue
		}
		if v.Kind() != canon.KindString || v.String() == "" {
			return nil, "argument " + name + " must name a " + t.Refs[name]
		}
		refs = append(refs, canon.Ref{Name: v.String(), Kind: t.Refs[name]})
	}
	return refs, ""
}

// instance is v, a value at depth depth of the arguments, as the schema
// validator reads JSON: objects as maps, arrays as slices, numbers as
// json.Number (their canonical text). It spares the validator a second
// parse of the arguments. It reports false for a value nested past
// maxSchemaDepth, which a Value parsed under wider limits than canon's
// defaults may hold.
func instance(v canon.Value, depth int) (any, bool) {
	if depth > maxSchemaDepth {
		return nil, false
	}
	switch v.Kind() {
	case canon.KindObject:
		m := make(map[string]any, v.Len())
		for k, c := range v.Members() {
			e, ok := instance(c, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = e
		}
		return m, true
	case canon.KindArray:
		a := make([]any, 0, v.Len())
		for _, c := range v.Elems() {
			e, ok := instance(c, depth+1)
			if !ok {
				return nil, false
			}
			a = append(a, e)
		}
		return a, true
	case canon.KindString:
		return v.String(), true
	case canon.KindNumber:
		return json.Number(v.Number()), true
	case canon.KindBool:
		return v.Bool(), true
	}
	return nil, true
}
