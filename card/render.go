package card

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
)

// Display limits. A string longer than maxShown runes (after escaping) is
// shown shortened to keepShown runes, and the card says so, with the full
// value's size and SHA-256; the HTML view can expand it.
const (
	maxShown      = 320
	keepShown     = 200
	maxBlockShown = 4000 // agent-written text
	keepBlock     = 3000
)

// Renderer is the default card renderer: the rules this package
// documents. Its [Renderer.ID] is written into every card it renders, so
// the card hash changes whenever the rendering rules do. The zero value is
// ready to use and safe for concurrent use.
type Renderer struct{}

// ID names the rendering rules, "asu.card/v2". It is the card JSON's
// "renderer" member and so part of the card hash.
func (Renderer) ID() string { return RendererID }

// RendererID is the ID of [Renderer].
const RendererID = "asu.card/v2"

// Render builds the card for effect e with the default [Renderer].
func Render(e canon.Effect, ctx Context) (*Card, error) { return Renderer{}.Render(e, ctx) }

// CheckContext validates the trusted parts of ctx that do not depend on an
// effect: the effect class and the trusted domains (none may be a public
// suffix such as "com" or "github.io", which would trust every domain
// registered under it). Call it when configuring a catalog, to fail there
// rather than at the first approval. Errors wrap [ErrBadContext].
func (Renderer) CheckContext(ctx Context) error {
	switch ctx.Class {
	case ClassRead, ClassReversible, ClassExternal, ClassIrreversible:
	default:
		return fmt.Errorf("%w: unknown effect class", ErrBadContext)
	}
	_, err := prepareTrusted(ctx.Trusted)
	return err
}

// Render builds the card for effect e from e itself and the trusted parts
// of ctx; ctx's untrusted fields are placed, escaped, in the region
// labelled as written by the agent.
//
// Render fails closed: it returns an error wrapping [ErrBadEffect] when e
// cannot be canonicalized, [ErrBadContext] when ctx is unusable (see
// [Renderer.CheckContext]), and [ErrUnrenderable] when part of e cannot be
// shown faithfully, such as an e-mail address or URL whose domain fails
// strict IDNA conversion. No card means no approval.
func (rr Renderer) Render(e canon.Effect, ctx Context) (*Card, error) {
	if err := rr.CheckContext(ctx); err != nil {
		return nil, err
	}
	if ctx.PolicyVersion != "" && ctx.PolicyVersion != e.PolicyVersion {
		return nil, fmt.Errorf("%w: policy version differs from the effect's", ErrBadContext)
	}
	canonical, err := e.Canonical()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEffect, err)
	}
	// The arguments are shown from the canonical effect itself, the bytes
	// the digest covers, not from the caller's spelling of them.
	whole, err := parseCanonical(canonical)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEffect, err)
	}
	tree := whole.member("args")
	if tree.kind != kindObject {
		return nil, fmt.Errorf("%w: arguments", ErrBadEffect)
	}
	trusted, err := prepareTrusted(ctx.Trusted)
	if err != nil {
		return nil, err
	}
	r := renderer{ctx: ctx, trusted: trusted, esc: escaper{quote: true}}
	m := model{
		Renderer: rr.ID(),
		Digest:   canon.Sum(canonical).String(),
		Tool: toolPart{
			Name:  r.esc.show(e.Tool),
			Title: r.esc.show(ctx.Title),
			Class: ctx.Class,
		},
		Refs:    []refPart{},
		Unbound: []refPart{},
		Context: contextPart{
			PolicyVersion: r.esc.show(e.PolicyVersion),
			Reasons:       r.showAll(ctx.Reasons),
			Provenance:    r.showAll(ctx.Provenance),
			Task:          r.esc.show(e.Task),
			User:          r.esc.show(e.Principal.User),
			Agent:         r.esc.show(e.Principal.Agent),
			Delegations:   r.showAll(e.Principal.Delegations),
			Audience:      r.esc.show(e.Audience),
		},
		Untrusted: untrustedPart{
			Rationale:       showBlock(ctx.Rationale),
			ToolDescription: showBlock(ctx.ToolDescription),
		},
	}
	if e.Step != "" {
		step := r.esc.show(e.Step)
		m.Context.Step = &step
	}
	if m.Args, err = r.fields(tree); err != nil {
		return nil, err
	}
	for i, ref := range e.Refs {
		p := refPart{Index: i, Name: r.esc.show(ref.Name), Kind: r.esc.show(ref.Kind), SHA256: ref.SHA256.String(), Size: ref.Size}
		if ref.Bound() {
			m.Refs = append(m.Refs, p)
		} else {
			why := r.esc.show(ref.Unbound)
			p.Reason = &why
			if ref.SHA256.IsZero() && ref.Size == 0 {
				p.SHA256 = "" // nothing recorded: say nothing
			}
			m.Unbound = append(m.Unbound, p)
		}
	}
	return seal(m, 8*len(canonical))
}

// renderer carries what one Render call needs while walking the arguments.
type renderer struct {
	ctx     Context
	trusted []trustedDomain
	esc     escaper
	seen    map[hostKey]domainPart // hosts analysed so far
}

func (r *renderer) showAll(list []string) []shown {
	out := make([]shown, len(list))
	for i, s := range list {
		out[i] = r.esc.show(s)
	}
	return out
}

// fields lays out the top-level arguments: the recipient, amount and
// currency first (or the catalog's order), then the rest in canonical order.
// Every argument appears exactly once.
func (r *renderer) fields(args value) ([]field, error) {
	h := r.ctx.Hints
	first := h.Order
	if len(first) == 0 {
		first = []string{h.Recipient, h.Amount, h.Currency}
	}
	out := make([]field, 0, len(args.members))
	placed := make([]bool, len(args.members))
	place := func(i int) error {
		if placed[i] {
			return nil
		}
		placed[i] = true
		f, err := r.field(args.members[i], args)
		if err != nil {
			return err
		}
		out = append(out, f)
		return nil
	}
	for _, name := range first {
		if name == "" {
			continue
		}
		for i, m := range args.members {
			if m.key == name {
				if err := place(i); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range args.members {
		if err := place(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *renderer) field(m kv, args value) (field, error) {
	h := r.ctx.Hints
	f := field{Name: r.esc.show(m.key)}
	doms, err := r.keyHosts(m.key, &f.Name)
	if err != nil {
		return field{}, err
	}
	f.NameDoms = doms
	if l, ok := h.Labels[m.key]; ok {
		s := r.esc.show(l)
		f.Label = &s
	}
	asHost := false
	for _, d := range h.Domains {
		asHost = asHost || d == m.key
	}
	switch m.key {
	case h.Recipient:
		f.Role = "recipient"
	case h.Amount:
		f.Role = "amount"
		if cur := r.currency(args); cur != "" {
			s := r.esc.show(cur)
			f.Currency = &s
		}
	case h.Currency:
		f.Role = "currency"
	}
	if u, ok := h.Units[m.key]; ok && m.val.kind == kindNumber {
		s := r.esc.show(u)
		f.Unit = &s
	}
	v, err := r.node(m.val, asHost)
	if err != nil {
		return field{}, err
	}
	f.Value = v
	return f, nil
}

// currency returns the amount's currency: the currency argument's string
// value, or the catalog's fixed currency.
func (r *renderer) currency(args value) string {
	h := r.ctx.Hints
	if h.Currency != "" {
		for _, m := range args.members {
			if m.key == h.Currency && m.val.kind == kindString {
				return m.val.text
			}
		}
		return ""
	}
	return h.FixedCurrency
}

func (r *renderer) node(v value, asHost bool) (node, error) {
	n := node{Kind: v.kind}
	switch v.kind {
	case kindString:
		s := r.esc.show(v.text)
		n.Text, n.Flags = s.Text, s.Flags
		if utf8.RuneCountInString(s.Text) > maxShown {
			n.Text = cutEscaped(s.Text, keepShown)
			n.Long = long(v.text, s.Text)
		}
		doms, notOne, err := r.hosts(v.text, asHost)
		if err != nil {
			return node{}, err
		}
		n.Domains = doms
		if notOne {
			n.Flags = addFlag(n.Flags, flagNotOneHost)
		}
	case kindObject:
		n.Members = make([]member, len(v.members))
		for i, m := range v.members {
			c, err := r.node(m.val, false)
			if err != nil {
				return node{}, err
			}
			k := r.esc.show(m.key)
			doms, err := r.keyHosts(m.key, &k)
			if err != nil {
				return node{}, err
			}
			n.Members[i] = member{Key: k, KeyDoms: doms, Value: c}
		}
	case kindArray:
		n.Items = make([]node, len(v.items))
		for i, it := range v.items {
			c, err := r.node(it, asHost)
			if err != nil {
				return node{}, err
			}
			n.Items[i] = c
		}
	default:
		n.Text = v.text
	}
	return n, nil
}

// keyHosts analyses an object key or argument name like a string value:
// an address used as a key ({"cc":{"x@example.com":"X"}}) is checked too.
func (r *renderer) keyHosts(key string, k *shown) ([]domainPart, error) {
	doms, notOne, err := r.hosts(key, false)
	if err != nil {
		return nil, err
	}
	if notOne {
		k.Flags = addFlag(k.Flags, flagNotOneHost)
	}
	return doms, nil
}

// addFlag adds f to a flag list, keeping display order.
func addFlag(list []string, f string) []string {
	var s flagSet
	for _, g := range list {
		s.add(g)
	}
	s.add(f)
	return s.list()
}

func long(raw, escaped string) *longPart {
	sum := sha256.Sum256([]byte(raw))
	return &longPart{Bytes: len(raw), SHA256: hex.EncodeToString(sum[:]), Full: escaped}
}

// cutEscaped returns the first n runes of escaped text, never cutting an
// escape sequence in two.
func cutEscaped(s string, n int) string {
	count := 0
	for i := 0; i < len(s); {
		if count >= n {
			return s[:i]
		}
		if s[i] == '\\' && i+1 < len(s) {
			j := escapeEnd(s, i)
			count += j - i
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s
}

// showBlock prepares agent-written multi-line text: escaped like any
// string, except that a line break stays a line break.
func showBlock(s string) block {
	sh := escaper{keepNewlines: true}.show(s)
	b := block{Text: sh.Text, Flags: sh.Flags}
	if utf8.RuneCountInString(sh.Text) > maxBlockShown {
		b.Text = cutEscaped(sh.Text, keepBlock)
		b.Long = long(s, sh.Text)
	}
	return b
}
