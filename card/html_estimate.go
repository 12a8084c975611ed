package card

import (
	"strings"

	"github.com/agentstepup/asu/card/internal/host"
)

// htmlEstimate estimates the length of the HTML view of c, so that a
// large view is written once into room of about its size, rather than
// counted by writing it a first time. It walks the arguments as the view
// does and counts the markup of each value as written and its text as
// its length; what it cannot know without escaping the text (characters
// HTML replaces, escape sequences) or writing the notes, it counts
// roughly. A wrong estimate costs time, never a byte of the view: a view
// larger than its room goes on in further room, joined at the end, and
// one much smaller is copied to a string of its own size.
func htmlEstimate(c *Card) int {
	m := &c.m
	n := 8192 + 3*(len(m.Untrusted.Rationale.Text)+len(m.Untrusted.ToolDescription.Text))
	n += 512 * (len(m.Refs) + len(m.Unbound) + len(m.Context.Reasons) + len(m.Context.Approvers) +
		len(m.Context.Delegations) + len(m.Context.Provenance))
	if m.counted {
		return n + m.htmlRoom
	}
	for i := range m.Args {
		n += htmlFieldEstimate(&m.Args[i]) + htmlTreeEstimate(&m.Args[i].Value)
	}
	return n
}

// htmlFieldEstimate estimates the markup of argument f itself, its
// value's members or items left out.
func htmlFieldEstimate(f *field) int {
	n := 256 + htmlTextEstimate(f.Name.Text) + 128*len(f.Name.Flags) + htmlDomainsEstimate(f.NameDoms)
	if f.Label != nil {
		n += 64 + htmlTextEstimate(f.Label.Text) + 128*len(f.Label.Flags)
	}
	return n + htmlLineEstimate(&f.Value)
}

// htmlTreeEstimate estimates the markup of the members or items of n,
// and theirs in turn.
func htmlTreeEstimate(n *node) int {
	t := 0
	switch n.kind() {
	case kindObject:
		ms := n.members()
		for i := range ms {
			t += htmlTreeLineEstimate(&ms[i].Value) + htmlTreeEstimate(&ms[i].Value)
		}
	case kindArray:
		items := n.items()
		for i := range items {
			t += htmlTreeLineEstimate(&items[i]) + htmlTreeEstimate(&items[i])
		}
	}
	return t
}

// htmlTextEstimate estimates what writeEsc writes for s: its run, s
// itself, and a run of its own for each escape sequence.
func htmlTextEstimate(s string) int {
	n := len(`<span class="asu-t"></span>`) + len(s)
	if mayHoldRTL(s) {
		// At most two marks for each digit (see htmlShownText).
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				n += 2 * len(lrm)
			}
		}
	}
	if strings.IndexByte(s, '\\') >= 0 {
		n += strings.Count(s, `\`) * len(`<span class="asu-esc"></span>`)
	}
	return n
}

// htmlDomainsEstimate estimates the boxes of the domains doms.
func htmlDomainsEstimate(doms []host.Domain) int {
	n := 0
	for i := range doms {
		d := &doms[i]
		n += 384 + 2*(len(d.ASCII)+len(d.Unicode)+len(d.Written.Text)+len(d.LooksLike)+len(d.Scripts)) + 192*len(d.Warnings)
	}
	return n
}

// htmlLineEstimate estimates what writeNodeBodyHTML writes for n, its
// members' and items' values left out.
func htmlLineEstimate(n *node) int {
	switch n.kind() {
	case kindObject:
		ms := n.members()
		if len(ms) == 0 {
			return len(`<i>{}</i> <small>(empty object)</small>`)
		}
		t := len(`<small>object of </small><ul class="asu-tree"></ul>`) + len(decimal(len(ms)))
		for i := range ms {
			k := ms[i].key()
			if isPlainKey(k.Text) {
				t += len(`<li><b></b>: </li>`) + len(k.Text)
			} else {
				t += len(`<li><b>""</b>: </li>`) + htmlTextEstimate(k.Text)
			}
			t += 128*len(k.Flags) + htmlDomainsEstimate(ms[i].keyDoms())
		}
		return t
	case kindArray:
		items := n.items()
		if len(items) == 0 {
			return len(`<i>[]</i> <small>(empty list)</small>`)
		}
		// The heads "[0]" on, counted at once.
		return len(`<small>list of </small><ul class="asu-tree"></ul>`) + len(decimal(len(items))) +
			len(items)*len(`<li><b>[]</b>: </li>`) + digitsBelow(len(items))
	case kindString:
		t := len(`<span class="asu-val asu-str asu-word">""</span>`) + htmlTextEstimate(n.Text)
		if l := n.long(); l != nil {
			t += 512 + htmlTextEstimate(l.Full)
		}
		if fs := n.flags(); len(fs) > 0 {
			t += len(`<ul class="asu-flags"></ul>`) + 128*len(fs)
		}
		return t + htmlDomainsEstimate(n.domains())
	}
	return len(`<span class="asu-val asu-number"></span>`) + len(n.Text)
}

// htmlTreeLineEstimate estimates what writeTreeValueHTML writes for n,
// its members' and items' values left out.
func htmlTreeLineEstimate(n *node) int {
	if k := n.kind(); k == kindNumber || k == kindBool || k == kindNull {
		return len(`<i></i>`) + len(n.Text)
	}
	return htmlLineEstimate(n)
}
