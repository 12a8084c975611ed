package card

import (
	"html/template"
	"strconv"
	"strings"
)

func writeEsc(b *strings.Builder, s string) { b.WriteString(string(escHTML(s))) }

func writeKeyHTML(b *strings.Builder, k shown) {
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
func writeFlagsHTML(b *strings.Builder, what string, flags []string) {
	if len(flags) == 0 {
		return
	}
	b.WriteString(`<ul class="asu-flags">`)
	for _, f := range flags {
		b.WriteString("<li>")
		b.WriteString(template.HTMLEscapeString(what + flagText(f)))
		b.WriteString("</li>")
	}
	b.WriteString("</ul>")
}

// writeKeyNotesHTML lists what was found in a key or argument name.
func writeKeyNotesHTML(b *strings.Builder, k shown, doms []domainPart) {
	writeFlagsHTML(b, "the name ", k.Flags)
	for i := range doms {
		writeDomainHTML(b, "in the name: ", &doms[i])
	}
}

func writeNodeHTML(b *strings.Builder, n *node) {
	switch n.Kind {
	case kindObject:
		if len(n.Members) == 0 {
			b.WriteString(`<span class="asu-val">{}</span> <span class="asu-type">(empty object)</span>`)
			return
		}
		b.WriteString(`<span class="asu-type">object of ` + strconv.Itoa(len(n.Members)) + `</span><ul class="asu-tree">`)
		for i := range n.Members {
			b.WriteString(`<li><span class="asu-key">`)
			writeKeyHTML(b, n.Members[i].Key)
			b.WriteString(`</span>: `)
			writeKeyNotesHTML(b, n.Members[i].Key, n.Members[i].KeyDoms)
			writeNodeHTML(b, &n.Members[i].Value)
			b.WriteString(`</li>`)
		}
		b.WriteString(`</ul>`)
	case kindArray:
		if len(n.Items) == 0 {
			b.WriteString(`<span class="asu-val">[]</span> <span class="asu-type">(empty list)</span>`)
			return
		}
		b.WriteString(`<span class="asu-type">list of ` + strconv.Itoa(len(n.Items)) + `</span><ul class="asu-tree">`)
		for i := range n.Items {
			b.WriteString(`<li><span class="asu-key">[` + strconv.Itoa(i) + `]</span>: `)
			writeNodeHTML(b, &n.Items[i])
			b.WriteString(`</li>`)
		}
		b.WriteString(`</ul>`)
	case kindString:
		if n.Long != nil {
			b.WriteString(`<details class="asu-long"><summary><span class="asu-val asu-str">"`)
			writeEsc(b, n.Text)
			b.WriteString(`"…</span> <span class="asu-flagline">shortened: ` + strconv.Itoa(n.Long.Bytes) +
				` bytes in full, SHA-256 <span class="asu-mono">` + template.HTMLEscapeString(n.Long.SHA256) +
				`</span> (select to show all)</span></summary><span class="asu-val asu-str">"`)
			writeEsc(b, n.Long.Full)
			b.WriteString(`"</span></details>`)
		} else {
			b.WriteString(`<span class="asu-val asu-str">"`)
			writeEsc(b, n.Text)
			b.WriteString(`"</span>`)
		}
		writeFlagsHTML(b, "", n.Flags)
		for i := range n.Domains {
			writeDomainHTML(b, "", &n.Domains[i])
		}
	default: // number, bool, null: canonical text, from a fixed alphabet
		kind := kindNull
		switch n.Kind {
		case kindNumber, kindBool:
			kind = n.Kind
		}
		b.WriteString(`<span class="asu-val asu-` + kind + `">`)
		b.WriteString(template.HTMLEscapeString(n.Text))
		b.WriteString(`</span>`)
	}
}

func writeDomainHTML(b *strings.Builder, where string, d *domainPart) {
	b.WriteString(`<div class="asu-domain`)
	if d.Trusted {
		b.WriteString(` asu-trusted`)
	}
	if len(d.Warnings) > 0 {
		b.WriteString(` asu-warned`)
	}
	b.WriteString(`"><span class="asu-dlabel">` + template.HTMLEscapeString(where) + `domain</span> <span class="asu-host">`)
	parts := regSplit(*d)
	b.WriteString(template.HTMLEscapeString(parts[0]))
	b.WriteString(`<strong>` + template.HTMLEscapeString(parts[1]) + `</strong></span>`)
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
			b.WriteString(`<li>` + template.HTMLEscapeString(warnText(w)))
			switch w {
			case warnLookalike, warnContainsTrusted:
				b.WriteString(`: <strong class="asu-mono">` + template.HTMLEscapeString(d.LooksLike) + `</strong>`)
			case warnMixedScript, warnLookalikeLabel:
				b.WriteString(` (scripts: ` + template.HTMLEscapeString(d.Scripts) + `)`)
			}
			b.WriteString(`</li>`)
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</div>`)
}
