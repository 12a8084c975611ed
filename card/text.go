package card

import (
	"strconv"
	"strings"
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

// keyText shows an object key or argument name: bare when it is a plain
// identifier, quoted and escaped otherwise, so keys never blur into the
// punctuation around them.
func keyText(s shown) string {
	if isPlainKey(s.Text) {
		return s.Text
	}
	return `"` + s.Text + `"`
}

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
func quoted(s shown) piece { return derived(`"` + s.Text + `"`) }

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
	w := &lineWriter{width: width}
	w.b.Grow(2048)
	flags := func(indent int, what string, fs []string) {
		for _, f := range fs {
			if what != "" {
				w.line(indent, "", fixed("(!) "+what+" "+flagText(f)))
			} else {
				w.line(indent, "", fixed("(!) "+flagText(f)))
			}
		}
	}

	w.line(0, "", fixed("APPROVAL REQUEST  (card "+m.Renderer+")"))
	w.line(0, "", fixed(headWhat))
	if m.Tool.Title.Text != "" {
		w.line(1, "", derived(m.Tool.Title.Text), fixed("  [tool "), quoted(m.Tool.Name), fixed("]"))
	} else {
		w.line(1, "", fixed("tool "), quoted(m.Tool.Name))
	}
	if m.Tool.Title.Text != "" {
		flags(2, "the title", m.Tool.Title.Flags)
	}
	flags(2, "the tool name", m.Tool.Name.Flags)
	w.line(1, "", fixed(classLine(m.Tool.Class)))
	if len(m.Args) == 0 {
		w.line(1, "", fixed("(no arguments)"))
	}
	for i := range m.Args {
		writeField(w, &m.Args[i])
	}

	w.line(0, "", fixed(headRefs))
	if len(m.Refs) == 0 {
		w.line(1, "", fixed("(no references)"))
	}
	for _, r := range m.Refs {
		w.line(1, "", fixed("["+strconv.Itoa(r.Index)+"] "), quoted(r.Kind), fixed(" "), quoted(r.Name),
			fixed(": "+strconv.FormatInt(r.Size, 10)+" bytes, SHA-256 "+r.SHA256))
		flags(3, "the kind", r.Kind.Flags)
		flags(3, "the name", r.Name.Flags)
	}
	if len(m.Unbound) > 0 {
		w.line(0, "", fixed(headUnbound))
		for _, r := range m.Unbound {
			recorded := ""
			if r.SHA256 != "" {
				recorded = "; recorded as " + strconv.FormatInt(r.Size, 10) + " bytes, SHA-256 " + r.SHA256
			}
			w.line(1, "", fixed("["+strconv.Itoa(r.Index)+"] "), quoted(r.Kind), fixed(" "), quoted(r.Name),
				fixed(": content not covered, because "), quoted(*r.Reason), fixed(recorded))
			flags(3, "the kind", r.Kind.Flags)
			flags(3, "the name", r.Name.Flags)
			flags(3, "the reason", r.Reason.Flags)
		}
	}

	w.line(0, "", fixed(headWhy))
	w.line(1, "", fixed("policy "), quoted(m.Context.PolicyVersion), fixed(" asks a person because:"))
	flags(3, "the policy version", m.Context.PolicyVersion.Flags)
	if len(m.Context.Reasons) == 0 {
		w.line(2, "", fixed("- (no reason given)"))
	}
	for _, r := range m.Context.Reasons {
		w.line(2, "", fixed("- "), derived(r.Text))
		flags(3, "", r.Flags)
	}

	w.line(0, "", fixed(headContext))
	w.line(1, "", fixed("on behalf of "), quoted(m.Context.User), fixed(" through agent "), quoted(m.Context.Agent))
	flags(3, "the user", m.Context.User.Flags)
	flags(3, "the agent", m.Context.Agent.Flags)
	if len(m.Context.Delegations) > 0 {
		ps := []piece{fixed("delegations: ")}
		for i, d := range m.Context.Delegations {
			if i > 0 {
				ps = append(ps, fixed(", "))
			}
			ps = append(ps, quoted(d))
		}
		w.line(1, "", ps...)
		for i, d := range m.Context.Delegations {
			flags(3, "delegation "+strconv.Itoa(i+1), d.Flags)
		}
	}
	ps := []piece{fixed("task "), quoted(m.Context.Task)}
	if m.Context.Step != nil {
		ps = append(ps, fixed(", step "), quoted(*m.Context.Step))
	}
	ps = append(ps, fixed(", executor "), quoted(m.Context.Audience))
	w.line(1, "", ps...)
	flags(3, "the task", m.Context.Task.Flags)
	if m.Context.Step != nil {
		flags(3, "the step", m.Context.Step.Flags)
	}
	flags(3, "the executor", m.Context.Audience.Flags)
	for _, p := range m.Context.Provenance {
		w.line(1, "", fixed("proposed after: "), quoted(p))
		flags(3, "", p.Flags)
	}

	w.line(0, "", fixed(headAgent))
	writeBlock(w, "agent's rationale", m.Untrusted.Rationale)
	writeBlock(w, "tool description from the tool server", m.Untrusted.ToolDescription)
	w.line(0, "", fixed(headEnd))
	if fingerprint {
		w.line(0, "", fixed("fingerprint "+m.fingerprint()))
	}
	return w.b.String()
}

// writeBlock writes agent text with every line behind a bar, so nothing in
// it can pass for a line of the card; a line the card wraps goes on behind
// the same bar.
func writeBlock(w *lineWriter, title string, bl block) {
	if bl.Text == "" && bl.Long == nil {
		w.line(1, "", fixed(title+": (none)"))
		return
	}
	w.line(1, "", fixed(title+":"))
	for _, l := range strings.Split(bl.Text, "\n") {
		w.line(1, "| ", fixed("| "), derived(l))
	}
	if bl.Long != nil {
		w.line(1, "", fixed("(!) shortened: "+strconv.Itoa(bl.Long.Bytes)+" bytes in full, SHA-256 "+bl.Long.SHA256))
	}
	for _, f := range bl.Flags {
		w.line(1, "", fixed("(!) "+flagText(f)))
	}
}

// scalarText shows a scalar node exactly: strings quoted, numbers and
// literals as canonicalized.
func scalarText(n *node) string {
	if n.Kind == kindString {
		if n.Long != nil {
			return `"` + n.Text + `"...`
		}
		return `"` + n.Text + `"`
	}
	return n.Text
}

func writeField(w *lineWriter, f *field) {
	head := []piece{derived(keyText(f.Name))}
	if f.Label != nil {
		head = []piece{derived(f.Label.Text), fixed(" ("), derived(keyText(f.Name)), fixed(")")}
	}
	var tail []piece
	if f.Currency != nil {
		tail = append(tail, fixed(" [currency "), quoted(*f.Currency), fixed("]"))
	}
	if f.Unit != nil {
		tail = append(tail, fixed(" [unit "), quoted(*f.Unit), fixed("]"))
	}
	writeNode(w, 1, head, f.Name, f.NameDoms, &f.Value, tail)
	if f.Label != nil {
		for _, fl := range f.Label.Flags {
			w.line(3, "", fixed("(!) the label "+flagText(fl)))
		}
	}
	if f.Currency != nil {
		for _, fl := range f.Currency.Flags {
			w.line(3, "", fixed("(!) the currency "+flagText(fl)))
		}
	}
}

// writeNode writes a value under its head (the key, label or index), then
// what was found in the key and in the value.
func writeNode(w *lineWriter, indent int, head []piece, key shown, keyDoms []domainPart, n *node, tail []piece) {
	keyNotes := func() {
		for _, f := range key.Flags {
			w.line(indent+2, "", fixed("(!) the name "+flagText(f)))
		}
		for i := range keyDoms {
			writeDomain(w, indent+2, "in the name: ", &keyDoms[i])
		}
	}
	line := append(head, fixed(": "))
	switch n.Kind {
	case kindObject:
		if len(n.Members) == 0 {
			w.line(indent, "", append(line, fixed("{} (empty object)"))...)
			keyNotes()
			return
		}
		w.line(indent, "", append(line, fixed("object of "+strconv.Itoa(len(n.Members))))...)
		keyNotes()
		for i := range n.Members {
			mb := &n.Members[i]
			writeNode(w, indent+2, []piece{derived(keyText(mb.Key))}, mb.Key, mb.KeyDoms, &mb.Value, nil)
		}
		return
	case kindArray:
		if len(n.Items) == 0 {
			w.line(indent, "", append(line, fixed("[] (empty list)"))...)
			keyNotes()
			return
		}
		w.line(indent, "", append(line, fixed("list of "+strconv.Itoa(len(n.Items))))...)
		keyNotes()
		for i := range n.Items {
			writeNode(w, indent+2, []piece{fixed("[" + strconv.Itoa(i) + "]")}, shown{}, nil, &n.Items[i], nil)
		}
		return
	}
	line = append(line, derived(scalarText(n)))
	w.line(indent, "", append(line, tail...)...)
	keyNotes()
	if n.Long != nil {
		w.line(indent+2, "", fixed("(!) shortened: "+strconv.Itoa(n.Long.Bytes)+" bytes in full, SHA-256 "+n.Long.SHA256))
	}
	for _, f := range n.Flags {
		w.line(indent+2, "", fixed("(!) "+flagText(f)))
	}
	for i := range n.Domains {
		writeDomain(w, indent+2, "", &n.Domains[i])
	}
}

func writeDomain(w *lineWriter, indent int, where string, d *domainPart) {
	ps := []piece{fixed(where + "domain ")}
	if d.ASCII != "" {
		ps = append(ps, fixed(d.ASCII))
	} else {
		ps = append(ps, quoted(d.Written))
	}
	if d.Registrable != "" && d.Registrable != d.ASCII {
		ps = append(ps, fixed(", registrable domain "+d.Registrable))
	}
	if d.Unicode != "" {
		ps = append(ps, fixed(", shown as "), derived(d.Unicode))
	}
	if d.Trusted {
		ps = append(ps, fixed(", TRUSTED"))
	}
	w.line(indent, "", ps...)
	for _, wn := range d.Warnings {
		s := "(!) " + warnText(wn)
		switch wn {
		case warnLookalike, warnContainsTrusted:
			s += ": " + d.LooksLike
		case warnMixedScript, warnLookalikeLabel:
			s += " (scripts: " + d.Scripts + ")"
		}
		w.line(indent+1, "", fixed(s))
	}
}
