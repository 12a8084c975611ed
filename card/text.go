package card

import (
	"strconv"
	"strings"

	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
	"github.com/agentstepup/asu/card/internal/wrap"
)

// classLine is what each effect class means to a reviewer; the two that
// cannot be taken back are marked.
func classLine(class string) string {
	switch class {
	case ClassRead:
		return "READ: reads data, changes nothing"
	case ClassReversible:
		return "REVERSIBLE: changes something that can be undone"
	case ClassExternal:
		return "(!) EXTERNAL: reaches people or systems outside; cannot be recalled"
	case ClassIrreversible:
		return "(!) IRREVERSIBLE: cannot be undone"
	}
	return class
}

// isPlainKey reports a key or argument name that is a plain identifier:
// shown bare, where any other is quoted and escaped, so keys never blur
// into the punctuation around them.
func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// quoted shows a string from the effect or context in quotes.
func quoted(s escape.Shown) wrap.Piece { return wrap.Derived(`"` + s.Text + `"`) }

// Headers of the text view, in order.
const (
	headWhat    = "== WHAT WILL RUN =="
	headRefs    = "== BOUND BY THIS APPROVAL: referenced content =="
	headUnbound = "== NOT BOUND BY THIS APPROVAL =="
	headWhy     = "== WHY YOU ARE ASKED =="
	headContext = "== CONTEXT =="
	headAgent   = "== WRITTEN BY THE AGENT: untrusted, not checked =="
	headEnd     = "== END OF AGENT TEXT =="
)

// Widths of the text view, in columns.
const (
	// DefaultWidth is the width in columns of [Card.Text].
	DefaultWidth = 80
	// MinWidth is the narrowest text view [Card.TextWidth] writes.
	MinWidth = 40
)

// Text returns the plain-text view at [DefaultWidth] columns, for terminals
// and logs; see [Card.TextWidth]. It holds no control characters other
// than newlines.
func (c *Card) Text() string { return c.text(true, DefaultWidth) }

// Visible returns the text view without the digest fingerprint: what
// distinguishes one effect's card from another's to a reader. Two effects
// with different digests never have equal Visible text.
func (c *Card) Visible() string { return c.text(false, DefaultWidth) }

// TextWidth returns the plain-text view wrapped at width columns; a width
// below [MinWidth] is taken as MinWidth. Every line the card writes starts
// with "▌", which nothing from the effect or the agent can show, so in a
// terminal narrower than width the pieces the terminal wraps onto new lines
// cannot pass for lines of the card; a line the card wraps itself goes on
// after "┆". Runs of spaces are shown counted (\{N spaces}), so padding
// cannot push text to where a line of the card would start.
func (c *Card) TextWidth(width int) string { return c.text(true, width) }

func (c *Card) text(fingerprint bool, width int) string {
	m := &c.m
	if m.Renderer == "" {
		return "NO APPROVAL CARD: this card was not rendered. Do not approve.\n"
	}
	if width < MinWidth {
		width = MinWidth
	}
	w := wrap.New(width, textEstimate(c, width)*9/8)
	flags := func(indent int, what string, fs []string) {
		for _, f := range fs {
			if what != "" {
				w.Line(indent, "", wrap.Fixed("(!) "+what+" "+escape.FlagText(f)))
			} else {
				w.Line(indent, "", wrap.Fixed("(!) "+escape.FlagText(f)))
			}
		}
	}

	w.Line(0, "", wrap.Fixed("APPROVAL REQUEST  (card "+m.Renderer+")"))
	w.Line(0, "", wrap.Fixed(headWhat))
	if m.Tool.Title.Text != "" {
		w.Line(1, "", wrap.Derived(m.Tool.Title.Text), wrap.Fixed("  [tool "), quoted(m.Tool.Name), wrap.Fixed("]"))
	} else {
		w.Line(1, "", wrap.Fixed("tool "), quoted(m.Tool.Name))
	}
	if m.Tool.Title.Text != "" {
		flags(2, "the title", m.Tool.Title.Flags)
	}
	flags(2, "the tool name", m.Tool.Name.Flags)
	w.Line(1, "", wrap.Fixed(classLine(m.Tool.Class)))
	if len(m.Args) == 0 {
		w.Line(1, "", wrap.Fixed("(no arguments)"))
	}
	v := &textView{Writer: w, seen: make([]writtenAt, m.memos), limit: viewBudget(c, textPerSource)}
	for i := range m.Args {
		v.field(&m.Args[i])
		if v.Len() > v.limit {
			return tooLargeText
		}
	}

	w.Line(0, "", wrap.Fixed(headRefs))
	if len(m.Refs) == 0 {
		w.Line(1, "", wrap.Fixed("(no references)"))
	}
	for _, r := range m.Refs {
		if r.Target != nil {
			w.Line(1, "", wrap.Fixed("["+strconv.Itoa(r.Index)+"] "), quoted(r.Kind), wrap.Fixed(" "), quoted(r.Name),
				wrap.Fixed(", which is "), quoted(*r.Target), wrap.Fixed(": "+refContent(r.Size, r.SHA256)))
		} else {
			w.Line(1, "", wrap.Fixed("["+strconv.Itoa(r.Index)+"] "), quoted(r.Kind), wrap.Fixed(" "), quoted(r.Name),
				wrap.Fixed(": "+refContent(r.Size, r.SHA256)))
		}
		flags(3, "the kind", r.Kind.Flags)
		flags(3, "the name", r.Name.Flags)
		if r.Target != nil {
			flags(3, "the target", r.Target.Flags)
		}
		for i := range r.NameDoms {
			v.domain(3, "the name's ", &r.NameDoms[i])
		}
	}
	if len(m.Unbound) > 0 {
		w.Line(0, "", wrap.Fixed(headUnbound))
		for _, r := range m.Unbound {
			recorded := ""
			if r.SHA256 != "" {
				recorded = "; recorded as " + strconv.FormatInt(r.Size, 10) + " bytes, SHA-256 " + r.SHA256
			}
			w.Line(1, "", wrap.Fixed("["+strconv.Itoa(r.Index)+"] "), quoted(r.Kind), wrap.Fixed(" "), quoted(r.Name),
				wrap.Fixed(": content not covered, because "), quoted(*r.Reason), wrap.Fixed(recorded))
			flags(3, "the kind", r.Kind.Flags)
			flags(3, "the name", r.Name.Flags)
			for i := range r.NameDoms {
				v.domain(3, "the name's ", &r.NameDoms[i])
			}
			flags(3, "the reason", r.Reason.Flags)
		}
	}

	w.Line(0, "", wrap.Fixed(headWhy))
	w.Line(1, "", wrap.Fixed("policy "), quoted(m.Context.PolicyVersion), wrap.Fixed(" asks a person because:"))
	flags(3, "the policy version", m.Context.PolicyVersion.Flags)
	if len(m.Context.Reasons) == 0 {
		w.Line(2, "", wrap.Fixed("- (no reason given)"))
	}
	for _, r := range m.Context.Reasons {
		w.Line(2, "", wrap.Fixed("- "), wrap.Derived(r.Text))
		flags(3, "", r.Flags)
	}
	for _, a := range m.Context.Approvers {
		w.Line(1, "", wrap.Fixed("who may approve: "), wrap.Derived(a.Text))
		flags(3, "", a.Flags)
	}

	w.Line(0, "", wrap.Fixed(headContext))
	w.Line(1, "", wrap.Fixed("on behalf of "), quoted(m.Context.User), wrap.Fixed(" through agent "), quoted(m.Context.Agent))
	flags(3, "the user", m.Context.User.Flags)
	flags(3, "the agent", m.Context.Agent.Flags)
	if len(m.Context.Delegations) > 0 {
		ps := []wrap.Piece{wrap.Fixed("delegations: ")}
		for i, d := range m.Context.Delegations {
			if i > 0 {
				ps = append(ps, wrap.Fixed(", "))
			}
			ps = append(ps, quoted(d))
		}
		w.Line(1, "", ps...)
		for i, d := range m.Context.Delegations {
			flags(3, "delegation "+strconv.Itoa(i+1), d.Flags)
		}
	}
	ps := []wrap.Piece{wrap.Fixed("task "), quoted(m.Context.Task)}
	if m.Context.Step != nil {
		ps = append(ps, wrap.Fixed(", step "), quoted(*m.Context.Step))
	}
	ps = append(ps, wrap.Fixed(", executor "), quoted(m.Context.Audience))
	w.Line(1, "", ps...)
	flags(3, "the task", m.Context.Task.Flags)
	if m.Context.Step != nil {
		flags(3, "the step", m.Context.Step.Flags)
	}
	flags(3, "the executor", m.Context.Audience.Flags)
	for _, p := range m.Context.Provenance {
		w.Line(1, "", wrap.Fixed("proposed after: "), quoted(p))
		flags(3, "", p.Flags)
	}

	w.Line(0, "", wrap.Fixed(headAgent))
	writeBlock(w, "agent's rationale", m.Untrusted.Rationale)
	writeBlock(w, "tool description from the tool server", m.Untrusted.ToolDescription)
	w.Line(0, "", wrap.Fixed(headEnd))
	if fingerprint {
		w.Line(0, "", wrap.Fixed("fingerprint "+m.fingerprint()))
	}
	if w.Len() > v.limit {
		return tooLargeText
	}
	return w.String()
}

// writeBlock writes agent text with every line behind a bar, so nothing in
// it can pass for a line of the card; a line the card wraps goes on behind
// the same bar.
func writeBlock(w *wrap.Writer, title string, bl block) {
	if bl.Text == "" && bl.Long == nil {
		w.Line(1, "", wrap.Fixed(title+": (none)"))
		return
	}
	w.Line(1, "", wrap.Fixed(title+":"))
	for _, l := range strings.Split(bl.Text, "\n") {
		w.Line(1, "| ", wrap.Fixed("| "), wrap.Derived(l))
	}
	if bl.Long != nil {
		w.Line(1, "", wrap.Fixed("(!) shortened: "+strconv.Itoa(bl.Long.Bytes)+" bytes in full, SHA-256 "+bl.Long.SHA256))
	}
	for _, f := range bl.Flags {
		w.Line(1, "", wrap.Fixed("(!) "+escape.FlagText(f)))
	}
}

// textView writes the arguments of the text view. A card can have a
// great many values, so it writes each line from pieces on the stack
// and shares the text of its notes.
type textView struct {
	*wrap.Writer
	seen    []writtenAt // by node.memo - 1: where its notes were first written
	num     []byte
	notes   map[noteKey]string // "(!) " + what + what a flag or warning says
	notesAt []noteAt           // where lines of notes were first written
	limit   int                // the view's byte budget: past it, writing stops and the view is refused
}

// noteAt is where the line of a note was first written, at which indent.
type noteAt struct {
	noteKey
	indent, start, end int
}

// maxNotesAt is how many lines of notes a text view remembers; a card
// has few kinds of notes, each said at few indents.
const maxNotesAt = 32

// writtenAt is where the notes of a value were written, at which indent.
type writtenAt struct{ start, end, indent int }

// noteKey names a note: a flag, or a domain's warning (some have the same
// names), about what.
type noteKey struct {
	what, name string
	warning    bool
}

// note returns "(!) " + what + what the flag (or, for a warning, the
// domain warning) says.
func (v *textView) note(what, name string, warning bool) string {
	k := noteKey{what, name, warning}
	if s, ok := v.notes[k]; ok {
		return s
	}
	text := escape.FlagText
	if warning {
		text = host.WarnText
	}
	s := "(!) " + what + text(name)
	if len(v.notes) < 256 {
		if v.notes == nil {
			v.notes = map[noteKey]string{}
		}
		v.notes[k] = s
	}
	return s
}

// noteLine writes the line of a note (see [textView.note]) at indent: the
// first time by wrapping it, then by copying what was written.
func (v *textView) noteLine(indent int, what, name string, warning bool) {
	for i := range v.notesAt {
		at := &v.notesAt[i]
		if at.indent == indent && at.name == name && at.what == what && at.warning == warning {
			v.Again(at.start, at.end)
			return
		}
	}
	start := v.Len()
	v.Line(indent, "", wrap.Fixed(v.note(what, name, warning)))
	if len(v.notesAt) < maxNotesAt {
		v.notesAt = append(v.notesAt, noteAt{noteKey{what, name, warning}, indent, start, v.Len()})
	}
}

// appendKey appends the pieces of a key or argument name to ps: bare when
// it is a plain identifier, quoted otherwise.
func appendKey(ps []wrap.Piece, s escape.Shown) []wrap.Piece {
	if isPlainKey(s.Text) {
		return append(ps, wrap.Derived(s.Text))
	}
	return append(ps, wrap.Derived(`"`), wrap.Derived(s.Text), wrap.Derived(`"`))
}

// appendScalar appends the pieces of a scalar node, shown exactly: strings
// quoted, numbers and literals as canonicalized.
func appendScalar(ps []wrap.Piece, n *node) []wrap.Piece {
	if n.kind() != kindString {
		return append(ps, wrap.Derived(n.Text))
	}
	ps = append(ps, wrap.Derived(`"`), wrap.Derived(n.Text))
	if n.long() != nil {
		return append(ps, wrap.Derived(`"...`))
	}
	return append(ps, wrap.Derived(`"`))
}

func (v *textView) field(f *field) {
	var h [6]wrap.Piece
	head := h[:0]
	if f.Label != nil {
		head = append(head, wrap.Derived(f.Label.Text), wrap.Fixed(" ("))
		head = appendKey(head, f.Name)
		head = append(head, wrap.Fixed(")"))
	} else {
		head = appendKey(head, f.Name)
	}
	var tail []wrap.Piece
	if f.Currency != nil {
		tail = append(tail, wrap.Fixed(" [currency "), quoted(*f.Currency), wrap.Fixed("]"))
	}
	if f.Unit != nil {
		tail = append(tail, wrap.Fixed(" [unit "), quoted(*f.Unit), wrap.Fixed("]"))
	}
	v.node(1, head, f.Name, f.NameDoms, &f.Value, tail)
	if f.Label != nil {
		for _, fl := range f.Label.Flags {
			v.noteLine(3, "the label ", fl, false)
		}
	}
	if f.Currency != nil {
		for _, fl := range f.Currency.Flags {
			v.noteLine(3, "the currency ", fl, false)
		}
	}
}

// node writes a value under its head (the key, label or index), then what
// was found in the key and in the value.
func (v *textView) node(indent int, head []wrap.Piece, key escape.Shown, keyDoms []host.Domain, n *node, tail []wrap.Piece) {
	keyNotes := func() {
		for _, f := range key.Flags {
			v.noteLine(indent+2, "the name ", f, false)
		}
		for i := range keyDoms {
			v.domain(indent+2, "in the name: ", &keyDoms[i])
		}
	}
	// A scalar with nothing said of it, under a head alone, is most
	// lines of a large card: written at once when it fits.
	if n.more == nil && len(head) == 1 && len(tail) == 0 && len(key.Flags) == 0 && len(keyDoms) == 0 {
		switch n.kind() {
		case kindString:
			if v.Short(indent, head[0], `"`, n.Text, `"`) {
				return
			}
		case kindNumber, kindBool, kindNull:
			if v.Short(indent, head[0], "", n.Text, "") {
				return
			}
		}
	}
	// The line is built on the stack, in room of its own: pieces
	// stored there cost no write barrier while the collector runs, as
	// pieces stored in the view's own room would.
	var room [8]wrap.Piece
	line := append(append(room[:0], head...), wrap.Fixed(": "))
	switch n.kind() {
	case kindObject:
		if len(n.members()) == 0 {
			line = append(line, wrap.Fixed("{} (empty object)"))
			v.Line(indent, "", line...)
			keyNotes()
			return
		}
		if len(head) != 1 || !v.Short(indent, head[0], "object of ", decimal(len(n.members())), "") {
			line = append(line, wrap.Fixed("object of "), wrap.Fixed(decimal(len(n.members()))))
			v.Line(indent, "", line...)
		}
		keyNotes()
		var kh [3]wrap.Piece
		for i := range n.members() {
			mb := &n.members()[i]
			// The head is copied into the line before anything else
			// is written, so one array holds each in turn.
			k := mb.key()
			v.node(indent+2, appendKey(kh[:0], k), k, mb.keyDoms(), &mb.Value, nil)
			if v.Len() > v.limit {
				return
			}
		}
		return
	case kindArray:
		if len(n.items()) == 0 {
			line = append(line, wrap.Fixed("[] (empty list)"))
			v.Line(indent, "", line...)
			keyNotes()
			return
		}
		if len(head) != 1 || !v.Short(indent, head[0], "list of ", decimal(len(n.items())), "") {
			line = append(line, wrap.Fixed("list of "), wrap.Fixed(decimal(len(n.items()))))
			v.Line(indent, "", line...)
		}
		keyNotes()
		var ih [1]wrap.Piece
		// The items' heads, "[0]" on, a string for many at a time: no
		// allocation for a short list, one per 1,024 items past that.
		var heads string
		for i := range n.items() {
			if heads == "" {
				heads, v.num = appendItemHeads(v.num, i, len(n.items()))
			}
			h := heads[:itemHeadLen(i)]
			heads = heads[len(h):]
			ih[0] = wrap.Fixed(h)
			v.node(indent+2, ih[:], escape.Shown{}, nil, &n.items()[i], nil)
			if v.Len() > v.limit {
				return
			}
		}
		return
	}
	line = append(appendScalar(line, n), tail...)
	v.Line(indent, "", line...)
	keyNotes()
	// What is said of a value the render shared is the same wherever
	// it stands at the same indent: written once, then copied.
	var done *writtenAt
	if n.memo() > 0 && int(n.memo()) <= len(v.seen) {
		done = &v.seen[n.memo()-1]
		if done.end > 0 && done.indent == indent {
			v.Again(done.start, done.end)
			return
		}
		if done.end > 0 {
			done = nil // written at another indent: write it out
		} else {
			done.start, done.indent = v.Len(), indent
		}
	}
	v.valueNotes(indent, n)
	if done != nil {
		done.end = v.Len()
	}
}

// valueNotes writes what was found in a scalar value, below it.
func (v *textView) valueNotes(indent int, n *node) {
	if l := n.long(); l != nil {
		v.Line(indent+2, "", wrap.Fixed("(!) shortened: "+strconv.Itoa(l.Bytes)+" bytes in full, SHA-256 "+l.SHA256))
	}
	for _, f := range n.flags() {
		v.noteLine(indent+2, "", f, false)
	}
	doms := n.domains()
	for i := range doms {
		v.domain(indent+2, "", &doms[i])
	}
}

func (v *textView) domain(indent int, where string, d *host.Domain) {
	var p [10]wrap.Piece
	ps := append(p[:0], wrap.Fixed(where), wrap.Fixed("domain "))
	if d.ASCII != "" {
		ps = append(ps, wrap.Fixed(d.ASCII))
	} else {
		ps = append(ps, wrap.Derived(`"`), wrap.Derived(d.Written.Text), wrap.Derived(`"`))
	}
	if d.Registrable != "" && d.Registrable != d.ASCII {
		ps = append(ps, wrap.Fixed(", registrable domain "), wrap.Fixed(d.Registrable))
	}
	if d.Unicode != "" {
		ps = append(ps, wrap.Fixed(", shown as "), wrap.Derived(d.Unicode))
	}
	if d.Trusted {
		ps = append(ps, wrap.Fixed(", TRUSTED"))
	}
	v.Line(indent, "", ps...)
	for _, wn := range d.Warnings {
		switch wn {
		case host.WarnLookalike, host.WarnContainsTrusted, host.WarnNearMiss:
			v.Line(indent+1, "", wrap.Fixed(v.note("", wn, true)+": "+d.LooksLike))
		case host.WarnMixedScript, host.WarnLookalikeLabel:
			v.Line(indent+1, "", wrap.Fixed(v.note("", wn, true)+" (scripts: "+d.Scripts+")"))
		default:
			v.noteLine(indent+1, "", wn, true)
		}
	}
}

// refContent says what a bound reference's content is: its size and hash,
// or, for a negative size, that nothing is there yet (the hash is then a
// resolver's fixed digest of absence, so content appearing later changes
// the effect).
func refContent(size int64, sha256 string) string {
	if size < 0 {
		return "nothing there yet, SHA-256 " + sha256
	}
	return strconv.FormatInt(size, 10) + " bytes, SHA-256 " + sha256
}

// textEstimate estimates the length of the text view of c at width
// columns, so that the view is written into room of about its size: not
// copied at the end for having been given far more room than it used, nor
// joined from chunks for having been given too little. It counts each
// line that fits as written; what it cannot know without laying lines
// out (the notes of a flag or a domain, lines wrapped) it counts roughly.
// A wrong estimate costs time, never a byte of the view. At
// [DefaultWidth] the arguments' lines were counted as the render built
// them; at another width they are counted by walking the arguments.
func textEstimate(c *Card, width int) int {
	m := &c.m
	n := 4096 + 2*(len(m.Untrusted.Rationale.Text)+len(m.Untrusted.ToolDescription.Text))
	n += 256 * (len(m.Refs) + len(m.Unbound) + len(m.Context.Reasons) + len(m.Context.Approvers) +
		len(m.Context.Delegations) + len(m.Context.Provenance))
	if width == DefaultWidth && m.counted {
		return n + m.textRoom
	}
	for i := range m.Args {
		n += textFieldEstimate(&m.Args[i], width) + textTreeEstimate(1, &m.Args[i].Value, width)
	}
	return n
}

// textFieldEstimate estimates the lines of argument f itself, its
// value's members or items left out.
func textFieldEstimate(f *field, width int) int {
	head := len(f.Name.Text) + 2
	if f.Label != nil {
		head += len(f.Label.Text) + 3
	}
	return textLineEstimate(1, head, &f.Value, width) + 96*(len(f.Name.Flags)+len(f.NameDoms))
}

// textMemberEstimate estimates the lines of member mb at indent, its
// value's own members or items left out.
func textMemberEstimate(indent int, mb *member, width int) int {
	k := mb.key()
	kh := len(k.Text)
	if !isPlainKey(k.Text) {
		kh += 2
	}
	return textLineEstimate(indent, kh, &mb.Value, width) + 96*(len(k.Flags)+len(mb.keyDoms()))
}

// textTreeEstimate estimates the lines of the members or items of n at
// indent, and theirs in turn.
func textTreeEstimate(indent int, n *node, width int) int {
	t := 0
	switch n.kind() {
	case kindObject:
		ms := n.members()
		for i := range ms {
			t += textMemberEstimate(indent+2, &ms[i], width) + textTreeEstimate(indent+2, &ms[i].Value, width)
		}
	case kindArray:
		items := n.items()
		for i := range items {
			t += textLineEstimate(indent+2, 0, &items[i], width) + textTreeEstimate(indent+2, &items[i], width)
		}
	}
	return t
}

// textLineEstimate estimates the text view's lines of n itself at indent
// under a head of head bytes, its members or items left out; see
// [textEstimate].
func textLineEstimate(indent, head int, n *node, width int) int {
	pad := min(2*indent, 32, width-28)
	// lineMark and the pad, the head, ": " and the newline.
	line := len("▌ ") + pad + head + 3
	switch n.kind() {
	case kindObject:
		if len(n.members()) == 0 {
			return line + len("{} (empty object)")
		}
		return line + len("object of ") + len(decimal(len(n.members())))
	case kindArray:
		items := n.items()
		if len(items) == 0 {
			return line + len("[] (empty list)")
		}
		// The heads "[0]" on, counted at once.
		return line + len("list of ") + len(decimal(len(items))) + 2*len(items) + digitsBelow(len(items))
	}
	line += len(n.Text)
	notes := 0
	if n.kind() == kindString {
		line += 2
		if n.long() != nil {
			line += 3
			notes++
		}
		notes += len(n.flags()) + 2*len(n.domains())
	}
	if room := width - 2 - pad; line > width && room > 8 {
		// Each wrapped line starts again with lineMark, the pad and "┆ ".
		line += (line / (room - 2)) * (len("▌ ") + pad + len("┆ "))
	}
	return line + 96*notes
}

// digitsBelow is the number of decimal digits of the numbers 0 to n-1
// together.
func digitsBelow(n int) int {
	d := 0
	for digits, lo, hi := 1, 0, 10; lo < n; digits, lo, hi = digits+1, hi, hi*10 {
		d += digits * (min(n, hi) - lo)
	}
	return d
}
