package card

import (
	"github.com/agentstepup/asu/card/internal/charclass"
	"html/template"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/card/internal/chunked"
	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
)

// seg is a run of displayed text; Esc marks an escape sequence (\u{200B},
// \n, ...), which the HTML view highlights so it cannot pass for text.
type seg struct {
	Text string
	Esc  bool
}

// segments splits escaped text into plain runs and escape sequences.
func segments(s string) []seg {
	var out []seg
	eachSegment(s, func(text string, esc bool) { out = append(out, seg{Text: text, Esc: esc}) })
	return out
}

// eachSegment calls f with each plain run and escape sequence of escaped
// text, in order.
func eachSegment(s string, f func(text string, esc bool)) {
	start := 0
	for i := strings.IndexByte(s, '\\'); i >= 0 && i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		j := escape.End(s, i)
		switch s[i+1] {
		case '\\', '"':
			i++ // a literal backslash or quote: plain text
			continue
		}
		if start < i {
			f(s[start:i], false)
		}
		f(s[i:j], true)
		start = j
		i = j - 1
	}
	if start < len(s) || s == "" {
		f(s[start:], false)
	}
}

// writeEsc writes escaped display text as HTML: html/template's escaping
// for the characters, a highlighted span for each escape sequence.
// Writing it straight into the view, rather than a nested template per
// string, keeps the HTML view fast.
func writeEsc(b *chunked.Builder, s string) {
	rtl := mayHoldRTL(s)
	if strings.IndexByte(s, '\\') < 0 {
		// No escape sequence: one plain run, what eachSegment gives.
		b.WriteString(`<span class="asu-t">`)
		htmlShownText(b, s, rtl)
		b.WriteString(`</span>`)
		return
	}
	b.WriteString(`<span class="asu-t">`)
	eachSegment(s, func(text string, esc bool) {
		if !esc {
			htmlShownText(b, text, rtl)
			return
		}
		b.WriteString(`<span class="asu-esc">`)
		htmlText(b, text)
		b.WriteString(`</span>`)
		if text == `\n` {
			b.WriteByte('\n') // the value goes on on a new line, after the visible \n
		}
	})
	b.WriteString(`</span>`)
}

// Right-to-left text and numbers. In a line laid out left to right, the
// bidirectional algorithm joins a number that follows right-to-left
// letters to their run and reverses the run, and leaves one before them
// where it stands: "ادفع 100 واسترد 200" and "200 ادفع 100 واسترد" draw
// alike. The HTML view therefore writes a left-to-right mark on each side
// of every run of ASCII digits in text holding right-to-left letters, so
// that no number joins a right-to-left run: the runs of right-to-left
// letters (with the spaces and punctuation between them) are each drawn
// reversed, as they read, and everything else in the order written. The
// marks are the view's own: the text itself, and the other views, are
// unchanged.

// lrm is U+200E LEFT-TO-RIGHT MARK.
const lrm = "\u200e"

// mayHoldRTL reports whether s may hold a right-to-left letter: a byte
// that starts one in UTF-8 (Hebrew, Arabic, Syriac, Thaana, N'Ko and the
// scripts after them to U+08FF; the presentation forms and the
// right-to-left scripts beyond the Basic Multilingual Plane start with
// 0xEF and 0xF0), checked for its letters only then.
func mayHoldRTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0xd6 && c <= 0xdf || c == 0xe0 || c == 0xef || c == 0xf0 {
			for _, r := range s[i:] {
				if r >= 0x590 && charclass.Lookup(r).Props&charclass.RTL != 0 {
					return true
				}
			}
			return false
		}
	}
	return false
}

// htmlShownText is htmlText, with each run of ASCII digits between two
// left-to-right marks when rtl is set (see above).
func htmlShownText(b *chunked.Builder, s string, rtl bool) {
	if !rtl {
		htmlText(b, s)
		return
	}
	for s != "" {
		i := strings.IndexFunc(s, isASCIIDigit)
		if i < 0 {
			htmlText(b, s)
			return
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		htmlText(b, s[:i])
		b.WriteString(lrm)
		b.WriteString(s[i:j])
		b.WriteString(lrm)
		s = s[j:]
	}
}

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

// htmlSpecial are the bytes template.HTMLEscapeString replaces; read only.
var htmlSpecial = [256]bool{0: true, '"': true, '\'': true, '&': true, '<': true, '>': true}

// nextHTMLSpecial returns the index in s of the first byte that
// template.HTMLEscapeString replaces, and what it puts in its place; len(s)
// when there is none.
func nextHTMLSpecial(s string) (int, string) {
	for i := 0; i < len(s); i++ {
		if !htmlSpecial[s[i]] {
			continue
		}
		switch s[i] {
		case 0:
			return i, "\uFFFD"
		case '"':
			return i, "&#34;"
		case '\'':
			return i, "&#39;"
		case '&':
			return i, "&amp;"
		case '<':
			return i, "&lt;"
		case '>':
			return i, "&gt;"
		}
	}
	return len(s), ""
}

// htmlText writes template.HTMLEscapeString(s) to b.
func htmlText(b *chunked.Builder, s string) {
	for {
		i, rep := nextHTMLSpecial(s)
		b.WriteString(s[:i])
		if i == len(s) {
			return
		}
		b.WriteString(rep)
		s = s[i+1:]
	}
}

// escapedNotes holds what a flag and a domain's warning say, escaped for
// HTML, by name: each written many times on a large card. Read only.
var escapedNotes = func() (m [2]map[string]string) {
	m[0], m[1] = map[string]string{}, map[string]string{}
	for _, f := range []string{
		escape.FlagControl, escape.FlagLines, escape.FlagInvisible, escape.FlagBidi, escape.FlagSpace,
		escape.FlagSpaceRun, escape.FlagNotNFC, escape.FlagCombining, escape.FlagCompat, escape.FlagLookalike,
		escape.FlagMixedScript, escape.FlagDrawing, escape.FlagLeadingSpace, escape.FlagTrailingSpace,
		escape.FlagPrivate, escape.FlagEmpty, escape.FlagRTL, escape.FlagNotOneHost,
	} {
		m[0][f] = template.HTMLEscapeString(escape.FlagText(f))
	}
	for _, w := range []string{
		host.WarnMixedScript, host.WarnLookalikeLabel, host.WarnLookalike, host.WarnContainsTrusted,
		host.WarnNoRegistrable, host.WarnUnlistedSuffix, host.WarnIP, host.WarnInvalid, host.WarnHiddenNonASCII,
		host.WarnDecoy, host.WarnMentioned, host.WarnMore, host.WarnUnanalysed, host.WarnNoSend, host.WarnRecipient,
		host.WarnEmptyLabel, host.WarnNearMiss, host.WarnRelay,
	} {
		m[1][w] = template.HTMLEscapeString(host.WarnText(w))
	}
	return m
}()

// flagHTML returns template.HTMLEscapeString(escape.FlagText(f)).
func flagHTML(f string) string {
	if s, ok := escapedNotes[0][f]; ok {
		return s
	}
	return template.HTMLEscapeString(escape.FlagText(f))
}

// warnHTML returns template.HTMLEscapeString(host.WarnText(w)).
func warnHTML(w string) string {
	if s, ok := escapedNotes[1][w]; ok {
		return s
	}
	return template.HTMLEscapeString(host.WarnText(w))
}

// regSplit splits an A-label host into the part before its registrable
// domain and the registrable domain, which the view emphasises.
func regSplit(d *host.Domain) (sub, reg string) {
	// A root dot (or empty labels) at the end follows the registrable
	// domain: "example.com." emphasises "example.com.".
	name := strings.TrimRight(d.ASCII, ".")
	tail := d.ASCII[len(name):]
	if d.Registrable == "" || !strings.HasSuffix(name, d.Registrable) {
		return d.ASCII, ""
	}
	return strings.TrimSuffix(name, d.Registrable), d.Registrable + tail
}

func writeKeyHTML(b *chunked.Builder, k escape.Shown) {
	if isPlainKey(k.Text) {
		writeEsc(b, k.Text)
		return
	}
	b.WriteByte('"')
	writeEsc(b, k.Text)
	b.WriteByte('"')
}

// writeFlagsHTML lists a string's flags; what names the string when it is
// not the value just shown ("the tool name ").
func writeFlagsHTML(b *chunked.Builder, what string, flags []string) {
	if len(flags) == 0 {
		return
	}
	b.WriteString(`<ul class="asu-flags">`)
	for _, f := range flags {
		b.WriteString("<li>")
		htmlText(b, what)
		b.WriteString(flagHTML(f))
		b.WriteString("</li>")
	}
	b.WriteString("</ul>")
}

// writeKeyNotesHTML lists what was found in a key or argument name.
func writeKeyNotesHTML(b *chunked.Builder, k escape.Shown, doms []host.Domain) {
	writeFlagsHTML(b, "the name ", k.Flags)
	for i := range doms {
		writeDomainHTML(b, "in the name: ", &doms[i])
	}
}

// nodeState is what writing the nodes of one HTML view shares: where
// shared nodes were first written, and the view's byte budget.
type nodeState struct {
	seen  []span
	limit int
}

// writeNodeHTML writes a node. seen[k] is where the node with memo k+1
// was first written (a zero span until then): its copies are the same
// HTML, copied from there.
func writeNodeHTML(b *chunked.Builder, n *node, st *nodeState) {
	if n.memo() <= 0 || int(n.memo()) > len(st.seen) {
		writeNodeBodyHTML(b, n, st)
		return
	}
	sp := &st.seen[n.memo()-1]
	if sp.end > 0 {
		// Written bytes never change: the copy reads them in place.
		b.Again(sp.start, sp.end)
		return
	}
	start := b.Len()
	writeNodeBodyHTML(b, n, st)
	*sp = span{start, b.Len()}
}

func writeNodeBodyHTML(b *chunked.Builder, n *node, st *nodeState) {
	switch n.kind() {
	case kindObject:
		if len(n.members()) == 0 {
			b.WriteString(`<i>{}</i> <small>(empty object)</small>`)
			return
		}
		b.WriteString(`<small>object of `)
		b.WriteString(decimal(len(n.members())))
		b.WriteString(`</small><ul class="asu-tree">`)
		for i := range n.members() {
			m := &n.members()[i]
			k := m.key()
			if isPlainKey(k.Text) {
				// Letters, digits, "_" and "-": no escape, nothing to
				// isolate, so no run of its own inside the key.
				b.WriteString(`<li><b>`)
				b.WriteString(k.Text)
				b.WriteString(`</b>: `)
			} else {
				b.WriteString(`<li><b>"`)
				writeEsc(b, k.Text)
				b.WriteString(`"</b>: `)
			}
			writeKeyNotesHTML(b, k, m.keyDoms())
			writeTreeValueHTML(b, &m.Value, st)
			b.WriteString(`</li>`)
			if b.Len() > st.limit {
				return // past the view's budget: the view is refused
			}
		}
		b.WriteString(`</ul>`)
	case kindArray:
		if len(n.items()) == 0 {
			b.WriteString(`<i>[]</i> <small>(empty list)</small>`)
			return
		}
		b.WriteString(`<small>list of `)
		b.WriteString(decimal(len(n.items())))
		b.WriteString(`</small><ul class="asu-tree">`)
		index := newNumeral()
		for i := range n.items() {
			it := &n.items()[i]
			b.WriteString(`<li><b>[`)
			b.Write(index.digits())
			index.next()
			if k := it.kind(); k == kindNumber || k == kindBool || k == kindNull {
				// What writeTreeValueHTML writes for it, with the
				// markup around it at once.
				b.WriteString(`]</b>: <i>`)
				htmlText(b, it.Text)
				b.WriteString(`</i></li>`)
			} else {
				b.WriteString(`]</b>: `)
				writeTreeValueHTML(b, it, st)
				b.WriteString(`</li>`)
			}
			if b.Len() > st.limit {
				return // past the view's budget: the view is refused
			}
		}
		b.WriteString(`</ul>`)
	case kindString:
		if l := n.long(); l != nil {
			b.WriteString(`<details class="asu-long"><summary><span class="asu-val asu-str">"`)
			writeEsc(b, n.Text)
			b.WriteString(`"…</span> <span class="asu-flagline">shortened: ` + strconv.Itoa(l.Bytes) +
				` bytes in full, SHA-256 <span class="asu-mono">` + template.HTMLEscapeString(l.SHA256) +
				`</span> (select to show all)</span></summary><span class="asu-val asu-str">"`)
			writeEsc(b, l.Full)
			b.WriteString(`"</span></details>`)
		} else if strings.IndexByte(n.Text, ' ') < 0 {
			// A value without a space (an address, a URL, an id) is
			// never broken across lines: it scrolls in its box.
			if strings.IndexByte(n.Text, '\\') < 0 {
				// What writeEsc writes for it, with the markup
				// around it at once.
				b.WriteString(`<span class="asu-val asu-str asu-word">"<span class="asu-t">`)
				htmlShownText(b, n.Text, mayHoldRTL(n.Text))
				b.WriteString(`</span>"</span>`)
			} else {
				b.WriteString(`<span class="asu-val asu-str asu-word">"`)
				writeEsc(b, n.Text)
				b.WriteString(`"</span>`)
			}
		} else {
			b.WriteString(`<span class="asu-val asu-str">"`)
			writeEsc(b, n.Text)
			b.WriteString(`"</span>`)
		}
		writeFlagsHTML(b, "", n.flags())
		doms := n.domains()
		for i := range doms {
			writeDomainHTML(b, "", &doms[i])
		}
	default: // number, bool, null: canonical text, from a fixed alphabet
		open := leafOpenHTML[kindNull]
		if int(n.kind()) < len(leafOpenHTML) {
			open = leafOpenHTML[n.kind()]
		}
		b.WriteString(open)
		htmlText(b, n.Text)
		b.WriteString(`</span>`)
	}
}

// writeTreeValueHTML writes the value of a list item or an object's
// member. A number, bool or null there is one short element, which the
// style sheet draws as a value (".asu-argval i"): the markup of the
// commonest items of a large list is a few bytes, not a few dozen. Its
// text, canonical and from a fixed alphabet, is the same as anywhere.
func writeTreeValueHTML(b *chunked.Builder, n *node, st *nodeState) {
	if k := n.kind(); k == kindNumber || k == kindBool || k == kindNull {
		b.WriteString(`<i>`)
		htmlText(b, n.Text)
		b.WriteString(`</i>`)
		return
	}
	writeNodeHTML(b, n, st)
}

// leafOpenHTML opens the value of a number, bool or null by kind (any
// other kind is shown as null). Read only.
var leafOpenHTML = [...]string{kindNull: `<span class="asu-val asu-null">`, kindString: `<span class="asu-val asu-null">`,
	kindNumber: `<span class="asu-val asu-number">`, kindBool: `<span class="asu-val asu-bool">`,
	kindObject: `<span class="asu-val asu-null">`, kindArray: `<span class="asu-val asu-null">`}

func writeDomainHTML(b *chunked.Builder, where string, d *host.Domain) {
	b.WriteString(`<div class="asu-domain`)
	if d.Trusted {
		b.WriteString(` asu-trusted`)
	}
	if len(d.Warnings) > 0 {
		b.WriteString(` asu-warned`)
	}
	b.WriteString(`"><span class="asu-dlabel">`)
	htmlText(b, where)
	b.WriteString(`domain</span> <span class="asu-host">`)
	sub, reg := regSplit(d)
	htmlText(b, sub)
	b.WriteString(`<strong>`)
	htmlText(b, reg)
	b.WriteString(`</strong></span>`)
	if d.Unicode != "" {
		b.WriteString(` <span class="asu-dnote">shown as <span class="asu-mono">`)
		writeEsc(b, d.Unicode)
		b.WriteString(`</span></span>`)
	}
	if d.Trusted {
		b.WriteString(` <span class="asu-badge asu-badge-ok">trusted</span>`)
	}
	if d.ASCII == "" {
		b.WriteString(` <span class="asu-dnote">written <span class="asu-mono">"`)
		writeEsc(b, d.Written.Text)
		b.WriteString(`"</span></span>`)
	}
	if len(d.Warnings) > 0 {
		b.WriteString(`<ul class="asu-flags">`)
		for _, w := range d.Warnings {
			b.WriteString(`<li>`)
			b.WriteString(warnHTML(w))
			switch w {
			case host.WarnLookalike, host.WarnContainsTrusted, host.WarnNearMiss:
				b.WriteString(`: <strong class="asu-mono">`)
				htmlText(b, d.LooksLike)
				b.WriteString(`</strong>`)
			case host.WarnMixedScript, host.WarnLookalikeLabel:
				b.WriteString(` (scripts: `)
				htmlText(b, d.Scripts)
				b.WriteString(`)`)
			}
			b.WriteString(`</li>`)
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</div>`)
}
