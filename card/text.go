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

// quoted shows a short trusted or effect string in quotes.
func quoted(s shown) string { return `"` + s.Text + `"` }

func (c *Card) text(fingerprint bool) string {
	m := &c.m
	if m.Renderer == "" {
		return "NO APPROVAL CARD: this card was not rendered. Do not approve.\n"
	}
	var b strings.Builder
	b.Grow(1024)
	line := func(indent int, parts ...string) {
		b.WriteString(strings.Repeat("  ", indent))
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	flags := func(indent int, fs []string) {
		for _, f := range fs {
			line(indent, "(!) ", flagText(f))
		}
	}

	line(0, "APPROVAL REQUEST  (card ", m.Renderer, ")")
	line(0, "== ACTION ==")
	title := m.Tool.Title.Text
	if title == "" {
		title = m.Tool.Name.Text
	}
	line(1, title, "  [tool ", quoted(m.Tool.Name), "]")
	flags(2, m.Tool.Name.Flags)
	line(1, classLine(m.Tool.Class))
	line(1, "policy ", quoted(m.Context.PolicyVersion), " asks a person because:")
	if len(m.Context.Reasons) == 0 {
		line(2, "- (no reason given)")
	}
	for _, r := range m.Context.Reasons {
		line(2, "- ", r.Text)
	}

	line(0, "== ARGUMENTS ==")
	if len(m.Args) == 0 {
		line(1, "(none)")
	}
	for _, f := range m.Args {
		head := keyText(f.Name)
		if f.Label != nil {
			head = f.Label.Text + " (" + head + ")"
		}
		writeNode(&b, 1, head, &f.Value, f.Unit, f.Currency)
	}

	line(0, "== BOUND BY THIS APPROVAL: referenced content ==")
	if len(m.Refs) == 0 {
		line(1, "(no references)")
	}
	for _, r := range m.Refs {
		line(1, "[", strconv.Itoa(r.Index), "] ", r.Kind.Text, " ", quoted(r.Name), ": ", strconv.FormatInt(r.Size, 10), " bytes, SHA-256 ", r.SHA256)
	}
	if len(m.Unbound) > 0 {
		line(0, "== NOT BOUND BY THIS APPROVAL ==")
		for _, r := range m.Unbound {
			recorded := ""
			if r.SHA256 != "" {
				recorded = "; recorded as " + strconv.FormatInt(r.Size, 10) + " bytes, SHA-256 " + r.SHA256
			}
			line(1, "[", strconv.Itoa(r.Index), "] ", r.Kind.Text, " ", quoted(r.Name), ": content not covered, ", quoted(*r.Reason), recorded)
		}
	}

	line(0, "== CONTEXT ==")
	line(1, "on behalf of ", quoted(m.Context.User), " through agent ", quoted(m.Context.Agent))
	if len(m.Context.Delegations) > 0 {
		parts := make([]string, len(m.Context.Delegations))
		for i, d := range m.Context.Delegations {
			parts[i] = quoted(d)
		}
		line(1, "delegations: ", strings.Join(parts, ", "))
	}
	line(1, "task ", quoted(m.Context.Task), ", step ", quoted(m.Context.Step), ", executor ", quoted(m.Context.Audience))
	for _, p := range m.Context.Provenance {
		line(1, "proposed after: ", p.Text)
	}

	line(0, "== WRITTEN BY THE AGENT: untrusted, not checked ==")
	writeBlock(&b, "agent's rationale", m.Untrusted.Rationale)
	writeBlock(&b, "tool description from the tool server", m.Untrusted.ToolDescription)
	line(0, "== END OF AGENT TEXT ==")
	if fingerprint {
		line(0, "fingerprint ", m.fingerprint())
	}
	return b.String()
}

// writeBlock writes agent text with every line behind a bar, so nothing in
// it can pass for a line of the card.
func writeBlock(b *strings.Builder, title string, bl block) {
	b.WriteString("  " + title + ":")
	if bl.Text == "" && bl.Long == nil {
		b.WriteString(" (none)\n")
		return
	}
	b.WriteByte('\n')
	for _, l := range strings.Split(bl.Text, "\n") {
		b.WriteString("  | ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if bl.Long != nil {
		b.WriteString("  (!) shortened: " + strconv.Itoa(bl.Long.Bytes) + " bytes in full, SHA-256 " + bl.Long.SHA256 + "\n")
	}
	for _, f := range bl.Flags {
		b.WriteString("  (!) " + flagText(f) + "\n")
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

func writeNode(b *strings.Builder, indent int, head string, n *node, unit, currency *shown) {
	pad := strings.Repeat("  ", indent)
	b.WriteString(pad + head + ": ")
	switch n.Kind {
	case kindObject:
		if len(n.Members) == 0 {
			b.WriteString("{} (empty object)\n")
			return
		}
		b.WriteString("object of " + strconv.Itoa(len(n.Members)) + "\n")
		for i := range n.Members {
			writeNode(b, indent+2, keyText(n.Members[i].Key), &n.Members[i].Value, nil, nil)
		}
		return
	case kindArray:
		if len(n.Items) == 0 {
			b.WriteString("[] (empty list)\n")
			return
		}
		b.WriteString("list of " + strconv.Itoa(len(n.Items)) + "\n")
		for i := range n.Items {
			writeNode(b, indent+2, "["+strconv.Itoa(i)+"]", &n.Items[i], nil, nil)
		}
		return
	}
	b.WriteString(scalarText(n))
	if currency != nil {
		b.WriteString(" " + currency.Text)
	}
	if unit != nil {
		b.WriteString(" " + unit.Text)
	}
	b.WriteByte('\n')
	sub := pad + "    "
	if n.Long != nil {
		b.WriteString(sub + "(!) shortened: " + strconv.Itoa(n.Long.Bytes) + " bytes in full, SHA-256 " + n.Long.SHA256 + "\n")
	}
	for _, f := range n.Flags {
		b.WriteString(sub + "(!) " + flagText(f) + "\n")
	}
	for i := range n.Domains {
		writeDomain(b, sub, &n.Domains[i])
	}
}

func writeDomain(b *strings.Builder, pad string, d *domainPart) {
	b.WriteString(pad + "domain " + d.ASCII)
	if d.Registrable != "" && d.Registrable != d.ASCII {
		b.WriteString(", registrable domain " + d.Registrable)
	}
	if d.Unicode != "" {
		b.WriteString(", shown as " + d.Unicode)
	}
	if d.Trusted {
		b.WriteString(", TRUSTED")
	}
	b.WriteByte('\n')
	if d.ASCII == "" {
		b.WriteString(pad + "  written " + quoted(d.Written) + "\n")
	}
	for _, w := range d.Warnings {
		b.WriteString(pad + "  (!) " + warnText(w))
		switch w {
		case warnLookalike, warnContainsTrusted:
			b.WriteString(": " + d.LooksLike)
		case warnMixedScript, warnLookalikeLabel:
			b.WriteString(" (scripts: " + d.Scripts + ")")
		}
		b.WriteByte('\n')
	}
}
