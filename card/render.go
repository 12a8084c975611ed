package card

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
	"github.com/agentstepup/asu/card/internal/memo"
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

// ID names the rendering rules, "asu.card/v4". It is the card JSON's
// "renderer" member and so part of the card hash.
func (Renderer) ID() string { return RendererID }

// RendererID is the ID of [Renderer].
const RendererID = "asu.card/v4"

// Render builds the card for effect e with the default [Renderer].
func Render(e canon.Effect, ctx Context) (*Card, error) { return Renderer{}.Render(e, ctx) }

// RenderSealed builds the card for the sealed effect s with the default
// [Renderer].
func RenderSealed(s canon.Sealed, ctx Context) (*Card, error) { return Renderer{}.RenderSealed(s, ctx) }

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
// labelled as written by the agent. It seals e first ([canon.Seal]); a
// caller holding the effect sealed already calls [Renderer.RenderSealed],
// which renders the same card without canonicalizing it again.
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
	s, err := canon.Seal(e)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEffect, err)
	}
	return rr.RenderSealed(s, ctx)
}

// RenderSealed builds the card for the sealed effect s, as [Renderer.Render]
// does for s.Effect(): the arguments are shown from s's canonical form,
// the bytes its digest covers, read once when s was sealed and not again
// here. It fails as Render does, and with [ErrBadEffect] for the zero
// Sealed.
func (rr Renderer) RenderSealed(s canon.Sealed, ctx Context) (*Card, error) {
	return rr.render(s, ctx, true)
}

// render is RenderSealed; remember says whether the renderer shares the
// work on a repeated string (tests compare a render without it).
func (rr Renderer) render(s canon.Sealed, ctx Context, remember bool) (*Card, error) {
	if err := rr.CheckContext(ctx); err != nil {
		return nil, err
	}
	if s.IsZero() {
		return nil, fmt.Errorf("%w: no effect", ErrBadEffect)
	}
	e := s.Effect()
	if ctx.PolicyVersion != "" && ctx.PolicyVersion != e.PolicyVersion {
		return nil, fmt.Errorf("%w: policy version differs from the effect's", ErrBadContext)
	}
	tree := s.Args()
	if tree.Kind() != canon.KindObject {
		return nil, fmt.Errorf("%w: arguments", ErrBadEffect)
	}
	trusted, err := prepareTrusted(ctx.Trusted)
	if err != nil {
		return nil, err
	}
	r := renderer{ctx: ctx, hosts: host.NewAnalyzer(trusted), esc: escape.Escaper{Quote: true},
		prose: escape.Escaper{Quote: true, Prose: true}, trusted: escape.Escaper{Prose: true}, remember: remember,
		limit: HashLimits().MaxBytes}
	m := model{
		Renderer: rr.ID(),
		Digest:   s.Digest().String(),
		Tool: toolPart{
			Name:  r.esc.Show(e.Tool),
			Title: r.trusted.Show(ctx.Title),
			Class: ctx.Class,
		},
		Refs:    []refPart{},
		Unbound: []refPart{},
		Context: contextPart{
			PolicyVersion: r.esc.Show(e.PolicyVersion),
			Reasons:       r.showAll(r.trusted, ctx.Reasons),
			Approvers:     r.showAll(r.trusted, ctx.Approvers),
			Provenance:    r.showAll(r.prose, ctx.Provenance),
			Task:          r.esc.Show(e.Task),
			User:          r.esc.Show(e.Principal.User),
			Agent:         r.esc.Show(e.Principal.Agent),
			Delegations:   r.showAll(r.esc, e.Principal.Delegations),
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
	m.memos = r.memos
	m.textRoom, m.htmlRoom, m.counted = r.textRoom, r.htmlRoom, true
	for i, ref := range e.Refs {
		name, err := r.key(ref.Name)
		if err != nil {
			return nil, err
		}
		p := refPart{Index: i, Name: name.shown, NameDoms: name.doms, Kind: r.esc.Show(ref.Kind), SHA256: ref.SHA256.String(), Size: ref.Size}
		if ref.Target != "" {
			target := r.esc.Show(ref.Target)
			p.Target = &target
		}
		if ref.Bound() {
			m.Refs = append(m.Refs, p)
		} else {
			why := r.prose.Show(ref.Unbound)
			p.Reason = &why
			if ref.SHA256.IsZero() && ref.Size == 0 {
				p.SHA256 = "" // nothing recorded: say nothing
			}
			m.Unbound = append(m.Unbound, p)
		}
	}
	c, err := seal(m)
	if err != nil {
		return nil, err
	}
	c.source = s.Len() + contextBytes(ctx)
	return c, nil
}

// seal computes the canonical JSON and hash of m. encodeModel writes
// canonical JSON as it goes, so it is not canonicalized again.
func seal(m model) (*Card, error) {
	c, err := encodeModel(&m)
	if err != nil {
		return nil, err
	}
	return &Card{m: m, canonical: c, hash: hashCanonical(c)}, nil
}

// renderer carries what one Render call needs while walking the arguments.
type renderer struct {
	ctx   Context
	hosts *host.Analyzer
	// esc shows identifiers, keys and names strictly (every look-alike
	// escaped); prose shows ordinary text as it reads (see
	// escape.Escaper.Prose), quoted; trusted shows the catalog's and the
	// policy's own text, which the views do not quote: escaped once.
	esc, prose, trusted escape.Escaper

	// An effect repeats its strings (the same keys in every object of a
	// list, the same address in many values): a string that costs more
	// than a glance is shown and analysed once, and later copies share
	// the result while the table still holds it. The table is bounded, so
	// a render naming more distinct strings only does some work again.
	remember bool
	vals     memo.Table[*node] // where the first node of the string was placed
	keys     memo.Table[keyShown]
	memos    int32 // node.memo numbers handed out

	// The nodes and members of the model are cut from slabs, which grow
	// as the model does: one allocation for many small lists.
	nodeSlab   []node
	memberSlab []member
	slab       int        // the length of the next slab
	count      jsonWriter // counts the card JSON of each node built

	size, limit int // least bytes of the card JSON so far; what a verifier accepts

	// The views' estimates of the arguments, each node's own lines and
	// markup counted by its parent once its head is known: the views
	// need not walk the model to learn them.
	textRoom, htmlRoom int
}

// maxMemoLen is the longest string remembered: a longer one costs as much
// to look up as to show, and is rarely repeated.
const maxMemoLen = 1024

// worthMemo reports whether showing and analysing s costs more than
// looking it up: it has characters the escaper looks at, or names a host.
func worthMemo(s string) bool {
	return len(s) <= maxMemoLen && (!escape.Plain(s) || host.NamesHost(s))
}

// keyShown is a key or argument name as shown, with its hosts.
type keyShown struct {
	shown escape.Shown
	doms  []host.Domain
	more  *keyMore // the flags and hosts, for a member's key; nil when none
}

// Slabs start small, for the small cards most are, and double up to
// maxSlab; a longer list takes an allocation of its own.
const (
	firstSlab = 16
	maxSlab   = 1024
)

// nextSlab returns the length of the next slab.
func (r *renderer) nextSlab() int {
	r.slab = min(max(2*r.slab, firstSlab), maxSlab)
	return r.slab
}

// nodes returns room for n nodes.
func (r *renderer) nodes(n int) []node {
	if n == 0 {
		return nil
	}
	return take(&r.nodeSlab, n, r.nextSlab)
}

// members returns room for n members.
func (r *renderer) members(n int) []member {
	if n == 0 {
		return nil
	}
	return take(&r.memberSlab, n, r.nextSlab)
}

// take returns the next n elements of slab, taking a new slab of
// size() elements when it has too few; a request for more than a
// quarter of the largest slab takes an allocation of its own.
func take[T any](slab *[]T, n int, size func() int) []T {
	if n > len(*slab) {
		if n > maxSlab/4 {
			return make([]T, n)
		}
		*slab = make([]T, max(n, size()))
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

// maxNodeSize bounds node.size: a node whose card JSON is longer makes
// a card larger than any verifier accepts, which is refused.
const maxNodeSize = 1 << 30

// sized records the length of n's card JSON in n.size, its children's
// counted before: each node's own bytes are counted once, when it is
// built, by the code that writes them.
func (r *renderer) sized(n *node) {
	if n.more == nil && n.nkids == 0 && int(n.kind()) < len(leafHeads) {
		// What nodeBody counts for such a node (most nodes), at once.
		n.size = int32(min(len(leafHeads[n.kind()])+strLen(n.Text)+len("}"), maxNodeSize))
		return
	}
	r.count = jsonWriter{counting: true, limit: maxNodeSize}
	r.count.nodeBody(n)
	n.size = int32(min(r.count.n, maxNodeSize))
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

func (r *renderer) showAll(e escape.Escaper, list []string) []escape.Shown {
	out := make([]escape.Shown, len(list))
	for i, s := range list {
		out[i] = e.Show(s)
	}
	return out
}

// fields lays out the top-level arguments: the recipient, amount and
// currency first (or the catalog's order), then the rest in canonical order.
// Every argument appears exactly once.
func (r *renderer) fields(args canon.Value) ([]field, error) {
	h := r.ctx.Hints
	first := h.Order
	if len(first) == 0 {
		first = []string{h.Recipient, h.Amount, h.Currency}
	}
	type arg struct {
		key string
		val canon.Value
	}
	members := make([]arg, 0, args.Len())
	for k, v := range args.Members() {
		members = append(members, arg{k, v})
	}
	// out never grows past its capacity, so a field's place in it is
	// final: the renderer remembers where each string's node is.
	out := make([]field, 0, len(members))
	placed := make([]bool, len(members))
	place := func(i int) error {
		if placed[i] {
			return nil
		}
		placed[i] = true
		out = append(out, field{})
		return r.field(&out[len(out)-1], members[i].key, members[i].val, args)
	}
	for _, name := range first {
		if name == "" {
			continue
		}
		for i, m := range members {
			if m.key == name {
				if err := place(i); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range members {
		if err := place(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *renderer) field(f *field, key string, val, args canon.Value) error {
	h := r.ctx.Hints
	k, err := r.key(key)
	if err != nil {
		return err
	}
	f.Name, f.NameDoms = k.shown, k.doms
	if l, ok := h.Labels[key]; ok {
		s := r.trusted.Show(l)
		f.Label = &s
	}
	asHost := false
	for _, d := range h.Domains {
		asHost = asHost || d == key
	}
	switch key {
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
	if u, ok := h.Units[key]; ok && val.Kind() == canon.KindNumber {
		s := r.prose.Show(u)
		f.Unit = &s
	}
	if err := r.node(&f.Value, val, asHost, 1); err != nil {
		return err
	}
	r.textRoom += textFieldEstimate(f, DefaultWidth)
	r.htmlRoom += htmlFieldEstimate(f)
	return nil
}

// currency returns the amount's currency: the currency argument's string
// value, or the catalog's fixed currency.
func (r *renderer) currency(args canon.Value) string {
	h := r.ctx.Hints
	if h.Currency != "" {
		if v, ok := args.Get(h.Currency); ok && v.Kind() == canon.KindString {
			return v.String()
		}
		return ""
	}
	return h.FixedCurrency
}

// kindOf is the card's kind of a JSON type.
func kindOf(k canon.Kind) kind {
	switch k {
	case canon.KindString:
		return kindString
	case canon.KindNumber:
		return kindNumber
	case canon.KindBool:
		return kindBool
	case canon.KindObject:
		return kindObject
	case canon.KindArray:
		return kindArray
	}
	return kindNull
}

// Least bytes of the card JSON a node and an object member take
// ({"kind":"null","text":"null"}, {"key":{"text":""},"value":...}), for
// the running count that refuses a card as soon as its JSON must pass
// the limit a verifier accepts.
const (
	nodeBytes   = len(`{"kind":"array","text":""}`)
	memberBytes = len(`{"key":{"text":""},"value":},`)
)

// shownBytes is the least size of a string node's shown text in the card
// JSON: its text, and the full text of a shortened one.
func shownBytes(n *node) int {
	if l := n.long(); l != nil {
		return len(n.Text) + len(l.Full)
	}
	return len(n.Text)
}

// errTooLarge refuses a card whose JSON would pass what a verifier
// accepts.
var errTooLarge = fmt.Errorf("%w: the card is larger than a verifier accepts", ErrUnrenderable)

// grow adds n bytes to the least size of the card JSON, and refuses the
// card once that passes the limit: the rest of the effect is not
// rendered for a card that cannot be approved.
func (r *renderer) grow(n int) error {
	r.size += n
	if r.size > r.limit {
		return errTooLarge
	}
	return nil
}

// node fills n, a node at its final place in the model, with v.
func (r *renderer) node(n *node, v canon.Value, asHost bool, indent int) error {
	if err := r.grow(nodeBytes); err != nil {
		return err
	}
	n.setKind(kindOf(v.Kind()))
	switch v.Kind() {
	case canon.KindString:
		return r.str(n, v.String(), asHost)
	case canon.KindObject:
		members := r.members(v.Len())
		n.setMembers(members)
		i := 0
		for key, c := range v.Members() {
			mb := &members[i]
			i++
			if err := r.node(&mb.Value, c, false, indent+2); err != nil {
				return err
			}
			k, err := r.key(key)
			if err != nil {
				return err
			}
			mb.Key, mb.more = k.shown.Text, k.more
			if err := r.grow(memberBytes + len(k.shown.Text)); err != nil {
				return err
			}
			r.textRoom += textMemberEstimate(indent+2, mb, DefaultWidth)
			r.htmlRoom += htmlTreeLineEstimate(&mb.Value)
		}
	case canon.KindArray:
		items := r.nodes(v.Len())
		n.setItems(items)
		i := 0
		for _, c := range v.Elems() {
			if err := r.node(&items[i], c, asHost, indent+2); err != nil {
				return err
			}
			r.textRoom += textLineEstimate(indent+2, 0, &items[i], DefaultWidth)
			r.htmlRoom += htmlTreeLineEstimate(&items[i])
			i++
		}
	default:
		n.Text = v.Canonical()
		if err := r.grow(len(n.Text)); err != nil {
			return err
		}
	}
	r.sized(n)
	return nil
}

// str fills n with the string s: escaped, shortened when long, and its
// hosts analysed; a string seen before in this render is copied.
func (r *renderer) str(n *node, s string, asHost bool) error {
	tag := uint8(0)
	if asHost {
		tag = 1
	}
	remember := r.remember && worthMemo(s)
	if remember {
		if prev, ok := r.vals.Get(s, tag); ok {
			*n = *prev
			return r.grow(shownBytes(n))
		}
	}
	sh := r.showValue(s)
	n.Text = sh.Text
	if len(sh.Flags) > 0 {
		n.moreOf().Flags = sh.Flags
	}
	if utf8.RuneCountInString(sh.Text) > maxShown {
		n.Text = escape.Cut(sh.Text, keepShown)
		n.moreOf().Long = long(s, sh.Text)
	}
	if err := r.grow(shownBytes(n)); err != nil {
		return err
	}
	doms, notOne, err := r.valueHosts(s, asHost)
	if err != nil {
		return err
	}
	if len(doms) > 0 {
		n.moreOf().Domains = doms
	}
	if notOne {
		n.moreOf().Flags = escape.AddFlag(n.flags(), escape.FlagNotOneHost)
	}
	r.sized(n)
	if remember && r.memos < maxMemo {
		r.memos++
		n.setMemo(r.memos)
		r.vals.Put(s, tag, n)
	}
	return nil
}

// showValue shows a string argument value: as prose, unless it could
// pass for a trusted domain's name (a look-alike of "example" in a
// value, when example.com is trusted), which keeps the strict rule.
func (r *renderer) showValue(s string) escape.Shown {
	if escape.Plain(s) {
		return r.esc.Show(s)
	}
	if r.hosts.ImitatesTrusted(s) {
		return r.esc.Show(s)
	}
	return r.prose.Show(s)
}

// key shows an object key or argument name and analyses it like a string
// value: an address used as a key ({"cc":{"x@example.com":"X"}}) is
// checked too.
func (r *renderer) key(key string) (keyShown, error) {
	remember := r.remember && worthMemo(key)
	if remember {
		if k, ok := r.keys.Get(key, 0); ok {
			return k, nil
		}
	}
	k := keyShown{shown: r.esc.Show(key)}
	doms, notOne, err := r.valueHosts(key, false)
	if err != nil {
		return keyShown{}, err
	}
	if notOne {
		k.shown.Flags = escape.AddFlag(k.shown.Flags, escape.FlagNotOneHost)
	}
	k.doms = doms
	if len(k.shown.Flags) > 0 || len(doms) > 0 {
		k.more = &keyMore{flags: k.shown.Flags, doms: doms}
	}
	if remember {
		r.keys.Put(key, 0, k)
	}
	return k, nil
}

func long(raw, escaped string) *longPart {
	sum := sha256.Sum256([]byte(raw))
	return &longPart{Bytes: len(raw), SHA256: hex.EncodeToString(sum[:]), Full: escaped}
}

// showBlock prepares agent-written multi-line text: escaped like any
// string, except that a line break stays a line break.
func showBlock(s string) block {
	sh := escape.Escaper{KeepNewlines: true, Prose: true}.Show(s)
	b := block{Text: sh.Text, Flags: sh.Flags}
	if utf8.RuneCountInString(sh.Text) > maxBlockShown {
		b.Text = escape.Cut(sh.Text, keepBlock)
		b.Long = long(s, sh.Text)
	}
	return b
}
