package card

import (
	"html/template"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/card/internal/chunked"
	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
)

// Summary is what a page shows right above its Approve button, in the
// card's own words: where the effect goes, how much, and how many
// warnings the card carries. It is built from the card only (never from
// agent text), so a person who reads only the last lines before the
// button still reads trusted ones. See [Card.Summary].
type Summary struct {
	// Recipients are the registrable domains of the hosts the recipient
	// argument names (the catalog's Hints.Recipient), in order, each with
	// whether the card marks it trusted; none when the tool has no
	// recipient or it names no host.
	Recipients []SummaryDomain
	// Amount is the amount argument as the card shows it, with its
	// currency quoted (120 "EUR"): a number as it is, a string quoted
	// ("120" "EUR"), an object or array by its kind ((object) "EUR");
	// empty when the tool has none.
	Amount string
	// Warnings counts the flags and domain warnings anywhere on the card.
	Warnings int
}

// SummaryDomain is one registrable domain of a [Summary].
type SummaryDomain struct {
	Domain  string // the registrable domain, A-label form; the host itself when it has none
	Trusted bool
	Warned  bool // the domain carries a warning
}

// Summary returns the card's summary for the place above the buttons.
func (c *Card) Summary() Summary {
	var s Summary
	m := &c.m
	for i := range m.Args {
		f := &m.Args[i]
		switch f.Role {
		case "recipient":
			s.Recipients = appendRecipients(s.Recipients, &f.Value)
		case "amount":
			switch f.Value.kind() {
			case kindString:
				// Quoted, as the card shows it: the text is the effect's,
				// never the summary's own words.
				s.Amount = `"` + f.Value.Text + `"`
			case kindObject, kindArray:
				s.Amount = "(" + kindNames[f.Value.kind()] + ")"
			default:
				s.Amount = f.Value.Text
			}
			if f.Currency != nil {
				// Quoted, as everywhere: the currency is the effect's text.
				s.Amount += ` "` + f.Currency.Text + `"`
			}
		}
	}
	s.Warnings = countWarnings(m)
	return s
}

// appendRecipients adds the registrable domains of a value's hosts,
// each once, in the order the card shows them: its own, then its items',
// then its members' keys' and values' (a recipient given as an object,
// {"address": ...}, goes where its members say).
func appendRecipients(out []SummaryDomain, n *node) []SummaryDomain {
	out = appendDomains(out, n.domains())
	for i := range n.items() {
		out = appendRecipients(out, &n.items()[i])
	}
	for i := range n.members() {
		m := &n.members()[i]
		out = appendDomains(out, m.keyDoms())
		out = appendRecipients(out, &m.Value)
	}
	return out
}

func appendDomains(out []SummaryDomain, doms []host.Domain) []SummaryDomain {
	for i := range doms {
		d := &doms[i]
		out = addRecipient(out, d.ASCII, d.Registrable, d.Trusted, len(d.Warnings) > 0)
	}
	return out
}

// addRecipient adds the registrable domain of one host (its A-label
// form ascii; registrable empty when it has none) to out, once: a domain
// seen before stays trusted only if every host of it is.
func addRecipient(out []SummaryDomain, ascii, registrable string, trusted, warned bool) []SummaryDomain {
	if ascii == "" {
		return out // the "more hosts" and "not analysed" entries
	}
	name := registrable
	if name == "" {
		name = ascii
	}
	for j := range out {
		if out[j].Domain == name {
			out[j].Trusted = out[j].Trusted && trusted
			out[j].Warned = out[j].Warned || warned
			return out
		}
	}
	return append(out, SummaryDomain{Domain: name, Trusted: trusted, Warned: warned})
}

// countWarnings counts the flags and domain warnings of the card.
func countWarnings(m *model) int {
	n := len(m.Tool.Name.Flags) + len(m.Tool.Title.Flags)
	for i := range m.Args {
		f := &m.Args[i]
		n += len(f.Name.Flags) + countDomains(f.NameDoms) + countNode(&f.Value)
		if f.Label != nil {
			n += len(f.Label.Flags)
		}
	}
	for _, list := range [][]refPart{m.Refs, m.Unbound} {
		for i := range list {
			n += len(list[i].Name.Flags) + len(list[i].Kind.Flags) + countDomains(list[i].NameDoms)
		}
	}
	c := &m.Context
	for _, sh := range []*escape.Shown{&c.User, &c.Agent, &c.Task, &c.Audience, &c.PolicyVersion, c.Step} {
		if sh != nil {
			n += len(sh.Flags)
		}
	}
	return n
}

func countNode(n *node) int {
	c := len(n.flags()) + countDomains(n.domains())
	for i := range n.items() {
		c += countNode(&n.items()[i])
	}
	for i := range n.members() {
		c += len(n.members()[i].key().Flags) + countDomains(n.members()[i].keyDoms()) + countNode(&n.members()[i].Value)
	}
	return c
}

func countDomains(list []host.Domain) int {
	c := 0
	for i := range list {
		c += len(list[i].Warnings)
	}
	return c
}

// SummaryHTML returns the summary as an HTML fragment styled by [CSS],
// for the place right above a page's buttons.
func (c *Card) SummaryHTML() template.HTML {
	if c.m.Renderer == "" {
		return `<div class="asu-summary asu-error">This approval card was not rendered. Do not approve.</div>`
	}
	s := c.Summary()
	var b chunked.Builder
	b.WriteString(`<div class="asu-summary" role="note"><p class="asu-sum-head">In the card's own words</p>`)
	if len(c.m.Tool.Title.Text) > 0 {
		b.WriteString(`<p><span class="asu-sum-label">Action</span> `)
		writeEsc(&b, c.m.Tool.Title.Text)
		b.WriteString(`</p>`)
	}
	if len(s.Recipients) > 0 {
		b.WriteString(`<p><span class="asu-sum-label">Goes to</span> `)
		for i, d := range s.Recipients {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`<strong class="asu-host">`)
			htmlText(&b, d.Domain)
			b.WriteString(`</strong>`)
			switch {
			case d.Trusted:
				b.WriteString(` <span class="asu-badge asu-badge-ok">trusted</span>`)
			case d.Warned:
				b.WriteString(` <span class="asu-badge asu-badge-warn">warned</span>`)
			default:
				b.WriteString(` <span class="asu-badge">not trusted</span>`)
			}
		}
		b.WriteString(`</p>`)
	}
	if s.Amount != "" {
		b.WriteString(`<p><span class="asu-sum-label">Amount</span> <strong class="asu-number">`)
		writeEsc(&b, s.Amount)
		b.WriteString(`</strong></p>`)
	}
	b.WriteString(`<p><span class="asu-sum-label">Warnings</span> `)
	switch s.Warnings {
	case 0:
		b.WriteString(`none on this card`)
	default:
		b.WriteString(`<strong class="asu-sum-warn">` + strconv.Itoa(s.Warnings) + ` on this card: read them above</strong>`)
	}
	b.WriteString(`</p></div>`)
	return template.HTML(b.String()) //nolint:gosec // every piece is escaped above
}

// SummaryText is the summary as lines for a terminal, each starting with
// the card's mark.
func (c *Card) SummaryText() string {
	s := c.Summary()
	var b strings.Builder
	if len(s.Recipients) > 0 {
		b.WriteString(lineMarkSummary + "goes to ")
		for i, d := range s.Recipients {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.Domain)
			if d.Trusted {
				b.WriteString(" (TRUSTED)")
			} else {
				b.WriteString(" (not trusted)")
			}
		}
		b.WriteString("\n")
	}
	if s.Amount != "" {
		b.WriteString(lineMarkSummary + "amount " + s.Amount + "\n")
	}
	b.WriteString(lineMarkSummary + "warnings: " + strconv.Itoa(s.Warnings) + "\n")
	return b.String()
}

const lineMarkSummary = "▌ summary: "
