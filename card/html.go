package card

import (
	"html/template"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/card/internal/chunked"
	"github.com/agentstepup/asu/card/internal/escape"
)

// The HTML view is written by code, not by a template: every character of
// every string from the effect or the context passes through escHTML or
// template.HTMLEscapeString (html/template's own escaper), and nothing
// from either is ever placed inside a tag or an attribute. Class names and
// markup come from this package's constants only. (An html/template version
// of this view was three to four times slower, most of it reflection.)

// hw writes the HTML view.
type hw struct {
	b  chunked.Builder
	st nodeState // see writeNodeHTML
}

func (w *hw) raw(s string)   { w.b.WriteString(s) }
func (w *hw) esc(s string)   { writeEsc(&w.b, s) }
func (w *hw) plain(s string) { htmlText(&w.b, s) }
func (w *hw) quoted(s escape.Shown) {
	w.raw(`<span class="asu-mono">"`)
	w.esc(s.Text)
	w.raw(`"</span>`)
}
func (w *hw) section(cls, title string) {
	w.raw(`<section class="asu-section ` + cls + `">` + "\n<h3>" + title + "</h3>\n")
}

// HTML returns the card as an HTML fragment, safe to embed in an approval
// page: every value, and all agent-written text, is escaped by html/template.
// It uses the classes styled by [CSS]; the page around it sets the
// content security policy.
func (c *Card) HTML() template.HTML { return c.html() }

func (c *Card) html() template.HTML {
	m := &c.m
	if m.Renderer == "" {
		return `<div class="asu-card asu-error">This approval card was not rendered. Do not approve.</div>`
	}
	w := &hw{st: nodeState{seen: make([]span, m.memos), limit: viewBudget(c, htmlPerSource)}}
	if len(c.canonical) > estimateHTMLPast {
		// Written once, into room of its estimated length, which costs
		// less than counting it by writing it twice.
		w.b.Grow(htmlEstimate(c)*9/8 + 4096)
	} else {
		// A small card's view is written once, into room of a guess
		// (the HTML of most cards is 2 to 4.5 times their JSON).
		w.b.Grow(len(c.canonical)*5/2 + 4096)
	}
	if !c.writeHTML(w) {
		return tooLargeHTML
	}
	return template.HTML(w.b.String()) // every string escaped on the way in
}

// estimateHTMLPast is the size of card JSON past which the room of the
// HTML view is estimated from its arguments.
const estimateHTMLPast = 64 << 10

// writeHTML writes the HTML view of c; false when it passed its budget.
func (c *Card) writeHTML(w *hw) bool {
	m := &c.m
	w.raw(`<article class="asu-card asu-class-` + classSlug(m.Tool.Class) + `" data-renderer="` + template.HTMLEscapeString(m.Renderer) + `" dir="ltr" lang="en">` + "\n")
	w.raw("<header class=\"asu-head\">\n<p class=\"asu-kicker\">Approval request</p>\n<h2 class=\"asu-title\">")
	if m.Tool.Title.Text != "" {
		w.esc(m.Tool.Title.Text)
	} else {
		w.esc(m.Tool.Name.Text)
	}
	w.raw("</h2>\n")
	if m.Tool.Title.Text != "" {
		writeFlagsHTML(&w.b, "the title ", m.Tool.Title.Flags)
	}
	w.raw("<p class=\"asu-tool\">tool ")
	w.quoted(m.Tool.Name)
	w.raw("</p>\n")
	writeFlagsHTML(&w.b, "the tool name ", m.Tool.Name.Flags)
	w.raw("<p class=\"asu-class\">")
	w.plain(strings.TrimPrefix(classLine(m.Tool.Class), "(!) "))
	w.raw("</p>\n</header>\n")

	w.section("asu-args", "What will run")
	if len(m.Args) == 0 {
		w.raw("<p class=\"asu-none\">(no arguments)</p>")
	} else {
		w.raw(`<div class="asu-argtable">`)
		for i := range m.Args {
			w.field(&m.Args[i])
			if w.b.Len() > w.st.limit {
				return false
			}
		}
		w.raw("\n</div>")
	}
	w.raw("\n</section>\n")

	w.section("asu-refs", "Bound by this approval: referenced content")
	if len(m.Refs) == 0 {
		w.raw("<p class=\"asu-none\">(no references)</p>")
	} else {
		w.raw("<ul>")
		for _, r := range m.Refs {
			w.raw(`<li><span class="asu-type">[` + strconv.Itoa(r.Index) + `]</span> `)
			w.quoted(r.Kind)
			w.raw(" ")
			w.quoted(r.Name)
			if r.Target != nil {
				w.raw(", which is ")
				w.quoted(*r.Target)
			}
			if r.Size < 0 {
				w.raw(`: nothing there yet, SHA-256 <span class="asu-mono asu-hash">`)
			} else {
				w.raw(": " + strconv.FormatInt(r.Size, 10) + ` bytes, SHA-256 <span class="asu-mono asu-hash">`)
			}
			w.plain(r.SHA256)
			w.raw("</span>")
			writeFlagsHTML(&w.b, "the kind ", r.Kind.Flags)
			writeKeyNotesHTML(&w.b, r.Name, r.NameDoms)
			if r.Target != nil {
				writeFlagsHTML(&w.b, "the target ", r.Target.Flags)
			}
			w.raw("</li>")
		}
		w.raw("</ul>")
	}
	w.raw("\n</section>\n")

	if len(m.Unbound) > 0 {
		w.section("asu-unbound", "Not bound by this approval")
		w.raw("<ul>")
		for _, r := range m.Unbound {
			w.raw(`<li><span class="asu-type">[` + strconv.Itoa(r.Index) + `]</span> `)
			w.quoted(r.Kind)
			w.raw(" ")
			w.quoted(r.Name)
			w.raw(": content not covered, because ")
			w.quoted(*r.Reason)
			if r.SHA256 != "" {
				w.raw("; recorded as " + strconv.FormatInt(r.Size, 10) + ` bytes, SHA-256 <span class="asu-mono asu-hash">`)
				w.plain(r.SHA256)
				w.raw("</span>")
			}
			writeFlagsHTML(&w.b, "the kind ", r.Kind.Flags)
			writeKeyNotesHTML(&w.b, r.Name, r.NameDoms)
			writeFlagsHTML(&w.b, "the reason ", r.Reason.Flags)
			w.raw("</li>")
		}
		w.raw("</ul>\n</section>\n")
	}

	w.section("asu-reasons", "Why you are asked")
	w.raw("<ul>")
	for _, r := range m.Context.Reasons {
		w.raw("<li>")
		w.esc(r.Text)
		writeFlagsHTML(&w.b, "", r.Flags)
		w.raw("</li>")
	}
	if len(m.Context.Reasons) == 0 {
		w.raw("<li>(no reason given)</li>")
	}
	w.raw("</ul>\n")
	for _, a := range m.Context.Approvers {
		w.raw("<p class=\"asu-approvers\">who may approve: ")
		w.esc(a.Text)
		writeFlagsHTML(&w.b, "", a.Flags)
		w.raw("</p>\n")
	}
	w.raw("<p class=\"asu-meta\">policy ")
	w.quoted(m.Context.PolicyVersion)
	w.raw("</p>\n")
	writeFlagsHTML(&w.b, "the policy version ", m.Context.PolicyVersion.Flags)
	w.raw("</section>\n")

	w.section("asu-context", "Context")
	w.raw("<dl>\n<dt>on behalf of</dt><dd>")
	w.quoted(m.Context.User)
	w.raw(" through agent ")
	w.quoted(m.Context.Agent)
	writeFlagsHTML(&w.b, "the user ", m.Context.User.Flags)
	writeFlagsHTML(&w.b, "the agent ", m.Context.Agent.Flags)
	w.raw("</dd>\n")
	if len(m.Context.Delegations) > 0 {
		w.raw("<dt>delegations</dt><dd>")
		for i, d := range m.Context.Delegations {
			if i > 0 {
				w.raw(", ")
			}
			w.quoted(d)
		}
		for i, d := range m.Context.Delegations {
			writeFlagsHTML(&w.b, "delegation "+strconv.Itoa(i+1)+" ", d.Flags)
		}
		w.raw("</dd>\n")
	}
	w.raw("<dt>task</dt><dd>")
	w.quoted(m.Context.Task)
	if m.Context.Step != nil {
		w.raw(", step ")
		w.quoted(*m.Context.Step)
	}
	w.raw(", executor ")
	w.quoted(m.Context.Audience)
	writeFlagsHTML(&w.b, "the task ", m.Context.Task.Flags)
	if m.Context.Step != nil {
		writeFlagsHTML(&w.b, "the step ", m.Context.Step.Flags)
	}
	writeFlagsHTML(&w.b, "the executor ", m.Context.Audience.Flags)
	w.raw("</dd>\n")
	for _, p := range m.Context.Provenance {
		w.raw("<dt>proposed after</dt><dd>")
		w.quoted(p)
		writeFlagsHTML(&w.b, "", p.Flags)
		w.raw("</dd>\n")
	}
	w.raw("</dl>\n</section>\n")

	w.raw(`<section class="asu-section asu-untrusted" aria-label="Written by the agent: untrusted">` + "\n")
	w.raw("<h3>Written by the agent: untrusted, not checked</h3>\n<h4>Agent's rationale</h4>\n")
	w.block(m.Untrusted.Rationale)
	w.raw("\n<h4>Tool description from the tool server</h4>\n")
	w.block(m.Untrusted.ToolDescription)
	w.raw("\n</section>\n")
	w.raw(`<footer class="asu-foot">fingerprint <span class="asu-mono">`)
	w.plain(m.fingerprint())
	w.raw("</span></footer>\n</article>")
	return w.b.Len() <= w.st.limit
}

// classSlug returns the CSS class suffix of an effect class; Render admits
// only the four known classes.
func classSlug(class string) string {
	switch class {
	case ClassRead, ClassReversible, ClassExternal, ClassIrreversible:
		return class
	}
	return "unknown"
}

func roleSlug(role string) string {
	switch role {
	case "recipient", "amount", "currency":
		return role
	}
	return ""
}

func (w *hw) field(f *field) {
	w.raw("\n<div class=\"asu-arg")
	if r := roleSlug(f.Role); r != "" {
		w.raw(" asu-role-" + r)
	}
	w.raw(`"><div class="asu-arghead">`)
	if f.Label != nil {
		w.raw(`<span class="asu-label">`)
		w.esc(f.Label.Text)
		w.raw(`</span> `)
	}
	w.raw(`<span class="asu-argname">`)
	writeKeyHTML(&w.b, f.Name)
	w.raw("</span></div>\n<div class=\"asu-argval\">")
	writeKeyNotesHTML(&w.b, f.Name, f.NameDoms)
	if f.Label != nil {
		writeFlagsHTML(&w.b, "the label ", f.Label.Flags)
	}
	writeNodeHTML(&w.b, &f.Value, &w.st)
	if f.Currency != nil {
		w.raw(` <span class="asu-unit">currency `)
		w.quoted(*f.Currency)
		w.raw(`</span>`)
		writeFlagsHTML(&w.b, "the currency ", f.Currency.Flags)
	}
	if f.Unit != nil {
		w.raw(` <span class="asu-unit">unit `)
		w.quoted(*f.Unit)
		w.raw(`</span>`)
	}
	w.raw("</div></div>")
}

// block writes agent text inside a pre element, in the untrusted section.
func (w *hw) block(bl block) {
	if bl.Text == "" && bl.Long == nil {
		w.raw(`<p class="asu-none">(none)</p>`)
		return
	}
	w.raw(`<pre class="asu-agent-text">`)
	w.esc(bl.Text)
	if bl.Long != nil {
		w.raw("…")
	}
	w.raw("</pre>")
	if bl.Long != nil {
		w.raw(`<p class="asu-flagline">shortened: ` + strconv.Itoa(bl.Long.Bytes) + ` bytes in full, SHA-256 <span class="asu-mono">`)
		w.plain(bl.Long.SHA256)
		w.raw("</span></p>")
	}
	writeFlagsHTML(&w.b, "", bl.Flags)
}
