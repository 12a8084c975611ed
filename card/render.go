package card

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
	"github.com/agentstepup/asu/card/internal/jsonread"
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

// prepareTrusted checks and normalizes the trusted domains.
func prepareTrusted(list []string) ([]host.Trusted, error) {
	trusted, err := host.PrepareTrusted(list)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadContext, err)
	}
	return trusted, nil
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
	whole, err := jsonread.Parse(canonical)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEffect, err)
	}
	tree := whole.Member("args")
	if tree.Kind != kindObject {
		return nil, fmt.Errorf("%w: arguments", ErrBadEffect)
	}
	trusted, err := prepareTrusted(ctx.Trusted)
	if err != nil {
		return nil, err
	}
	r := renderer{ctx: ctx, hosts: host.NewAnalyzer(trusted), esc: escape.Escaper{Quote: true}}
	m := model{
		Renderer: rr.ID(),
		Digest:   canon.Sum(canonical).String(),
		Tool: toolPart{
			Name:  r.esc.Show(e.Tool),
			Title: r.esc.Show(ctx.Title),
			Class: ctx.Class,
		},
		Refs:    []refPart{},
		Unbound: []refPart{},
		Context: contextPart{
			PolicyVersion: r.esc.Show(e.PolicyVersion),
			Reasons:       r.showAll(ctx.Reasons),
			Provenance:    r.showAll(ctx.Provenance),
			Task:          r.esc.Show(e.Task),
			User:          r.esc.Show(e.Principal.User),
			Agent:         r.esc.Show(e.Principal.Agent),
			Delegations:   r.showAll(e.Principal.Delegations),
			Audience:      r.esc.Show(e.Audience),
		},
		Untrusted: untrustedPart{
			Rationale:       showBlock(ctx.Rationale),
			ToolDescription: showBlock(ctx.ToolDescription),
		},
	}
	if e.Step != "" {
		step := r.esc.Show(e.Step)
		m.Context.Step = &step
	}
	if m.Args, err = r.fields(tree); err != nil {
		return nil, err
	}
	for i, ref := range e.Refs {
		p := refPart{Index: i, Name: r.esc.Show(ref.Name), Kind: r.esc.Show(ref.Kind), SHA256: ref.SHA256.String(), Size: ref.Size}
		if ref.Bound() {
			m.Refs = append(m.Refs, p)
		} else {
			why := r.esc.Show(ref.Unbound)
			p.Reason = &why
			if ref.SHA256.IsZero() && ref.Size == 0 {
				p.SHA256 = "" // nothing recorded: say nothing
			}
			m.Unbound = append(m.Unbound, p)
		}
	}
	return seal(m, 8*len(canonical))
}

// seal computes the canonical JSON and hash of m. encodeModel writes
// canonical JSON as it goes, so it is not canonicalized again.
func seal(m model, sizeHint int) (*Card, error) {
	c := encodeModel(&m, sizeHint)
	if cap(c) > 2*len(c)+4096 {
		c = append([]byte(nil), c...) // do not keep the unused estimate
	}
	if len(c) > HashLimits().MaxBytes {
		return nil, fmt.Errorf("%w: the card is larger than a verifier accepts", ErrUnrenderable)
	}
	return &Card{m: m, canonical: c, hash: hashCanonical(c)}, nil
}

// renderer carries what one Render call needs while walking the arguments.
type renderer struct {
	ctx   Context
	hosts *host.Analyzer
	esc   escape.Escaper
}

// valueHosts finds and analyses the hosts of a string; see
// [host.Analyzer.Hosts].
func (r *renderer) valueHosts(s string, asHost bool) ([]host.Domain, bool, error) {
	doms, notOne, err := r.hosts.Hosts(s, asHost)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrUnrenderable, err)
	}
	return doms, notOne, nil
}

func (r *renderer) showAll(list []string) []escape.Shown {
	out := make([]escape.Shown, len(list))
	for i, s := range list {
		out[i] = r.esc.Show(s)
	}
	return out
}

// fields lays out the top-level arguments: the recipient, amount and
// currency first (or the catalog's order), then the rest in canonical order.
// Every argument appears exactly once.
func (r *renderer) fields(args jsonread.Value) ([]field, error) {
	h := r.ctx.Hints
	first := h.Order
	if len(first) == 0 {
		first = []string{h.Recipient, h.Amount, h.Currency}
	}
	out := make([]field, 0, len(args.Members))
	placed := make([]bool, len(args.Members))
	place := func(i int) error {
		if placed[i] {
			return nil
		}
		placed[i] = true
		f, err := r.field(args.Members[i], args)
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
		for i, m := range args.Members {
			if m.Key == name {
				if err := place(i); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range args.Members {
		if err := place(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *renderer) field(m jsonread.Member, args jsonread.Value) (field, error) {
	h := r.ctx.Hints
	f := field{Name: r.esc.Show(m.Key)}
	doms, err := r.keyHosts(m.Key, &f.Name)
	if err != nil {
		return field{}, err
	}
	f.NameDoms = doms
	if l, ok := h.Labels[m.Key]; ok {
		s := r.esc.Show(l)
		f.Label = &s
	}
	asHost := false
	for _, d := range h.Domains {
		asHost = asHost || d == m.Key
	}
	switch m.Key {
	case h.Recipient:
		f.Role = "recipient"
	case h.Amount:
		f.Role = "amount"
		if cur := r.currency(args); cur != "" {
			s := r.esc.Show(cur)
			f.Currency = &s
		}
	case h.Currency:
		f.Role = "currency"
	}
	if u, ok := h.Units[m.Key]; ok && m.Val.Kind == kindNumber {
		s := r.esc.Show(u)
		f.Unit = &s
	}
	v, err := r.node(m.Val, asHost)
	if err != nil {
		return field{}, err
	}
	f.Value = v
	return f, nil
}

// currency returns the amount's currency: the currency argument's string
// value, or the catalog's fixed currency.
func (r *renderer) currency(args jsonread.Value) string {
	h := r.ctx.Hints
	if h.Currency != "" {
		for _, m := range args.Members {
			if m.Key == h.Currency && m.Val.Kind == kindString {
				return m.Val.Text
			}
		}
		return ""
	}
	return h.FixedCurrency
}

func (r *renderer) node(v jsonread.Value, asHost bool) (node, error) {
	n := node{Kind: v.Kind}
	switch v.Kind {
	case kindString:
		s := r.esc.Show(v.Text)
		n.Text, n.Flags = s.Text, s.Flags
		if utf8.RuneCountInString(s.Text) > maxShown {
			n.Text = escape.Cut(s.Text, keepShown)
			n.Long = long(v.Text, s.Text)
		}
		doms, notOne, err := r.valueHosts(v.Text, asHost)
		if err != nil {
			return node{}, err
		}
		n.Domains = doms
		if notOne {
			n.Flags = escape.AddFlag(n.Flags, escape.FlagNotOneHost)
		}
	case kindObject:
		n.Members = make([]member, len(v.Members))
		for i, m := range v.Members {
			c, err := r.node(m.Val, false)
			if err != nil {
				return node{}, err
			}
			k := r.esc.Show(m.Key)
			doms, err := r.keyHosts(m.Key, &k)
			if err != nil {
				return node{}, err
			}
			n.Members[i] = member{Key: k, KeyDoms: doms, Value: c}
		}
	case kindArray:
		n.Items = make([]node, len(v.Items))
		for i, it := range v.Items {
			c, err := r.node(it, asHost)
			if err != nil {
				return node{}, err
			}
			n.Items[i] = c
		}
	default:
		n.Text = v.Text
	}
	return n, nil
}

// keyHosts analyses an object key or argument name like a string value:
// an address used as a key ({"cc":{"x@example.com":"X"}}) is checked too.
func (r *renderer) keyHosts(key string, k *escape.Shown) ([]host.Domain, error) {
	doms, notOne, err := r.valueHosts(key, false)
	if err != nil {
		return nil, err
	}
	if notOne {
		k.Flags = escape.AddFlag(k.Flags, escape.FlagNotOneHost)
	}
	return doms, nil
}

func long(raw, escaped string) *longPart {
	sum := sha256.Sum256([]byte(raw))
	return &longPart{Bytes: len(raw), SHA256: hex.EncodeToString(sum[:]), Full: escaped}
}

// showBlock prepares agent-written multi-line text: escaped like any
// string, except that a line break stays a line break.
func showBlock(s string) block {
	sh := escape.Escaper{KeepNewlines: true}.Show(s)
	b := block{Text: sh.Text, Flags: sh.Flags}
	if utf8.RuneCountInString(sh.Text) > maxBlockShown {
		b.Text = escape.Cut(sh.Text, keepBlock)
		b.Long = long(s, sh.Text)
	}
	return b
}
