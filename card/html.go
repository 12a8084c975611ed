package card

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"
)

// seg is a run of displayed text; Esc marks an escape sequence (\u{200B},
// \n, ...), which the HTML view highlights so it cannot pass for text.
type seg struct {
	Text string
	Esc  bool
}

// segments splits escaped text into plain runs and escape sequences.
func segments(s string) []seg {
	if !strings.Contains(s, `\`) {
		return []seg{{Text: s}}
	}
	var out []seg
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		j := i + 2
		switch s[i+1] {
		case 'u':
			for j < len(s) && s[j-1] != '}' {
				j++
			}
		case '\\', '"':
			i++ // a literal backslash or quote: plain text
			continue
		}
		if start < i {
			out = append(out, seg{Text: s[start:i]})
		}
		out = append(out, seg{Text: s[i:j], Esc: true})
		start = j
		i = j - 1
	}
	if start < len(s) {
		out = append(out, seg{Text: s[start:]})
	}
	return out
}

// regSplit splits an A-label host into the part before its registrable
// domain and the registrable domain, which the view emphasises.
func regSplit(d domainPart) []string {
	if d.Registrable == "" || !strings.HasSuffix(d.ASCII, d.Registrable) {
		return []string{d.ASCII, ""}
	}
	return []string{strings.TrimSuffix(d.ASCII, d.Registrable), d.Registrable}
}

var htmlFuncs = template.FuncMap{
	"segs":      segments,
	"flagText":  flagText,
	"warnText":  warnText,
	"classLine": classLine,
	"regSplit":  regSplit,
	"plainKey":  isPlainKey,
	"add1":      func(i int) int { return i + 1 },
	"short":     func(s string) string { return s[:12] },
	"itoa":      strconv.Itoa,
	"warnNames": func(w string) bool { return w == warnLookalike || w == warnContainsTrusted },
	"warnScr":   func(w string) bool { return w == warnMixedScript || w == warnLookalikeLabel },
}

// cardTemplate is parsed once; html/template escapes every value for its
// context, so agent text cannot open, close or forge an element.
var cardTemplate = template.Must(template.New("card").Funcs(htmlFuncs).Parse(cardHTML))

func (c *Card) html() template.HTML {
	var buf bytes.Buffer
	if err := cardTemplate.Execute(&buf, &c.m); err != nil {
		// Not reachable with a model Render built; never show half a card.
		return `<div class="asu-card asu-error">This approval card could not be displayed. Do not approve.</div>`
	}
	return template.HTML(buf.String()) // produced by html/template, which escaped every value
}

const cardHTML = `{{define "text"}}<span class="asu-t">{{range segs .}}{{if .Esc}}<span class="asu-esc">{{.Text}}</span>{{else}}{{.Text}}{{end}}{{end}}</span>{{end}}
{{- define "key"}}{{if plainKey .Text}}{{template "text" .Text}}{{else}}"{{template "text" .Text}}"{{end}}{{end}}
{{- define "flags"}}{{if .}}<ul class="asu-flags">{{range .}}<li>{{flagText .}}</li>{{end}}</ul>{{end}}{{end}}
{{- define "domain"}}<div class="asu-domain{{if .Trusted}} asu-trusted{{end}}{{if .Warnings}} asu-warned{{end}}">
<span class="asu-dlabel">domain</span> {{with regSplit .}}<span class="asu-host">{{index . 0}}<strong>{{index . 1}}</strong></span>{{end}}
{{- if .Unicode}} <span class="asu-dnote">shown as <span class="asu-mono">{{template "text" .Unicode}}</span></span>{{end}}
{{- if .Trusted}} <span class="asu-badge asu-badge-ok">trusted</span>{{end}}
{{- if not .ASCII}} <span class="asu-dnote">written <span class="asu-mono">"{{template "text" .Written.Text}}"</span></span>{{end}}
{{- if .Warnings}}<ul class="asu-flags">{{$d := .}}{{range .Warnings}}<li>{{warnText .}}{{if warnNames .}}: <strong class="asu-mono">{{$d.LooksLike}}</strong>{{end}}{{if warnScr .}} (scripts: {{$d.Scripts}}){{end}}</li>{{end}}</ul>{{end}}
</div>{{end}}
{{- define "node"}}
{{- if eq .Kind "object"}}{{if .Members}}<span class="asu-type">object of {{len .Members}}</span><ul class="asu-tree">{{range .Members}}<li><span class="asu-key">{{template "key" .Key}}</span>: {{template "node" .Value}}</li>{{end}}</ul>{{else}}<span class="asu-val">{}</span> <span class="asu-type">(empty object)</span>{{end}}
{{- else if eq .Kind "array"}}{{if .Items}}<span class="asu-type">list of {{len .Items}}</span><ul class="asu-tree">{{range $i, $v := .Items}}<li><span class="asu-key">[{{$i}}]</span>: {{template "node" $v}}</li>{{end}}</ul>{{else}}<span class="asu-val">[]</span> <span class="asu-type">(empty list)</span>{{end}}
{{- else if eq .Kind "string"}}
{{- if .Long}}<details class="asu-long"><summary><span class="asu-val asu-str">"{{template "text" .Text}}"…</span> <span class="asu-flagline">shortened: {{.Long.Bytes}} bytes in full, SHA-256 <span class="asu-mono">{{.Long.SHA256}}</span> (select to show all)</span></summary><span class="asu-val asu-str">"{{template "text" .Long.Full}}"</span></details>
{{- else}}<span class="asu-val asu-str">"{{template "text" .Text}}"</span>{{end}}
{{- template "flags" .Flags}}{{range .Domains}}{{template "domain" .}}{{end}}
{{- else}}<span class="asu-val asu-{{.Kind}}">{{.Text}}</span>{{end}}
{{- end}}
{{- define "block"}}{{if or .Text .Long}}<pre class="asu-agent-text">{{template "text" .Text}}{{if .Long}}…{{end}}</pre>
{{- if .Long}}<p class="asu-flagline">shortened: {{.Long.Bytes}} bytes in full, SHA-256 <span class="asu-mono">{{.Long.SHA256}}</span></p>{{end}}
{{- template "flags" .Flags}}{{else}}<p class="asu-none">(none)</p>{{end}}{{end}}
<article class="asu-card asu-class-{{.Tool.Class}}" data-renderer="{{.Renderer}}" dir="ltr" lang="en">
<header class="asu-head">
<p class="asu-kicker">Approval request</p>
<h2 class="asu-title">{{if .Tool.Title.Text}}{{template "text" .Tool.Title.Text}}{{else}}{{template "text" .Tool.Name.Text}}{{end}}</h2>
<p class="asu-tool">tool <span class="asu-mono">{{template "text" .Tool.Name.Text}}</span></p>
<p class="asu-class">{{classLine .Tool.Class}}</p>
</header>
<section class="asu-section asu-reasons">
<h3>Why you are asked</h3>
<ul>{{range .Context.Reasons}}<li>{{template "text" .Text}}</li>{{else}}<li>(no reason given)</li>{{end}}</ul>
<p class="asu-meta">policy <span class="asu-mono">{{template "text" .Context.PolicyVersion.Text}}</span></p>
</section>
<section class="asu-section asu-args">
<h3>What will run</h3>
{{if .Args}}<table class="asu-argtable">{{range .Args}}
<tr class="asu-arg{{if .Role}} asu-role-{{.Role}}{{end}}"><th scope="row">{{if .Label}}<span class="asu-label">{{template "text" .Label.Text}}</span> {{end}}<span class="asu-argname">{{template "key" .Name}}</span></th>
<td>{{template "node" .Value}}{{if .Currency}} <span class="asu-unit">{{template "text" .Currency.Text}}</span>{{end}}{{if .Unit}} <span class="asu-unit">{{template "text" .Unit.Text}}</span>{{end}}</td></tr>{{end}}
</table>{{else}}<p class="asu-none">(no arguments)</p>{{end}}
</section>
<section class="asu-section asu-refs">
<h3>Bound by this approval: referenced content</h3>
{{if .Refs}}<ul>{{range .Refs}}<li>{{template "text" .Kind.Text}} <span class="asu-mono">"{{template "text" .Name.Text}}"</span>: {{.Size}} bytes, SHA-256 <span class="asu-mono asu-hash">{{.SHA256}}</span></li>{{end}}</ul>{{else}}<p class="asu-none">(no references)</p>{{end}}
</section>
{{if .Unbound}}<section class="asu-section asu-unbound">
<h3>Not bound by this approval</h3>
<ul>{{range .Unbound}}<li>{{template "text" .Kind.Text}} <span class="asu-mono">"{{template "text" .Name.Text}}"</span>: content not covered, <span class="asu-mono">"{{template "text" .Reason.Text}}"</span>{{if or .SHA256 .Size}}; recorded as {{.Size}} bytes, SHA-256 <span class="asu-mono asu-hash">{{.SHA256}}</span>{{end}}</li>{{end}}</ul>
</section>{{end}}
<section class="asu-section asu-context">
<h3>Context</h3>
<dl>
<dt>on behalf of</dt><dd><span class="asu-mono">"{{template "text" .Context.User.Text}}"</span> through agent <span class="asu-mono">"{{template "text" .Context.Agent.Text}}"</span></dd>
{{if .Context.Delegations}}<dt>delegations</dt><dd>{{range $i, $d := .Context.Delegations}}{{if $i}}, {{end}}<span class="asu-mono">"{{template "text" $d.Text}}"</span>{{end}}</dd>{{end}}
<dt>task</dt><dd><span class="asu-mono">"{{template "text" .Context.Task.Text}}"</span>, step <span class="asu-mono">"{{template "text" .Context.Step.Text}}"</span>, executor <span class="asu-mono">"{{template "text" .Context.Audience.Text}}"</span></dd>
{{range .Context.Provenance}}<dt>proposed after</dt><dd>{{template "text" .Text}}</dd>{{end}}
</dl>
</section>
<section class="asu-section asu-untrusted" aria-label="Written by the agent: untrusted">
<h3>Written by the agent: untrusted, not checked</h3>
<h4>Agent's rationale</h4>
{{template "block" .Untrusted.Rationale}}
<h4>Tool description from the tool server</h4>
{{template "block" .Untrusted.ToolDescription}}
</section>
<footer class="asu-foot">fingerprint <span class="asu-mono">{{short .Digest}}</span></footer>
</article>`

// CSS is the style sheet for the classes [Card.HTML] uses. Serve it as a
// file, or inline it under a hash-based content security policy.
const CSS = `.asu-card{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#17171a;background:#fff;border:1px solid #c9c9d1;border-radius:10px;max-width:46rem;margin:1rem auto;overflow:hidden;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.asu-card h3{font-size:.78rem;letter-spacing:.06em;text-transform:uppercase;color:#55555f;margin:0 0 .5rem}
.asu-card h4{font-size:.85rem;margin:.6rem 0 .3rem;color:#44444c}
.asu-head{padding:1rem 1.25rem;border-bottom:1px solid #e2e2e8;background:#f6f6f8}
.asu-kicker{margin:0;font-size:.75rem;text-transform:uppercase;letter-spacing:.08em;color:#66666f}
.asu-title{margin:.15rem 0 .1rem;font-size:1.4rem}
.asu-tool{margin:0;color:#55555f;font-size:.9rem}
.asu-class{display:inline-block;margin:.6rem 0 0;padding:.25rem .6rem;border-radius:6px;font-weight:600;font-size:.9rem;background:#e8eef7;color:#1d3b66}
.asu-class-external .asu-head{background:#fff6e8;border-bottom-color:#f0c987}
.asu-class-external .asu-class{background:#9a4a00;color:#fff}
.asu-class-irreversible .asu-head{background:#fdecec;border-bottom-color:#eba3a3}
.asu-class-irreversible .asu-class{background:#a3121b;color:#fff}
.asu-section{padding:.9rem 1.25rem;border-bottom:1px solid #ececf0}
.asu-section ul{margin:0;padding-left:1.2rem}
.asu-meta{margin:.4rem 0 0;color:#66666f;font-size:.85rem}
.asu-mono,.asu-val,.asu-host,.asu-key,.asu-argname,.asu-agent-text{font-family:ui-monospace,"DejaVu Sans Mono","Noto Sans Mono",Menlo,Consolas,monospace}
.asu-t,.asu-mono,.asu-val{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
.asu-argtable{border-collapse:collapse;width:100%}
.asu-argtable th{text-align:left;vertical-align:top;padding:.45rem .9rem .45rem 0;width:11rem;font-weight:600}
.asu-argtable td{vertical-align:top;padding:.45rem 0;border-top:1px solid #f0f0f3}
.asu-argtable tr:first-child td{border-top:0}
.asu-argname{display:block;font-weight:400;font-size:.8rem;color:#66666f}
.asu-label+.asu-argname{margin-top:.1rem}
.asu-val{font-size:1rem;background:#f3f3f6;border-radius:4px;padding:.05rem .3rem}
.asu-role-recipient .asu-val,.asu-role-amount .asu-val{font-size:1.1rem;font-weight:700;background:#eef3fb}
.asu-unit{font-weight:700}
.asu-type{color:#66666f;font-size:.85rem}
.asu-tree{list-style:none;padding-left:1.1rem!important;margin:.2rem 0!important;border-left:2px solid #e4e4ea}
.asu-esc{background:#ffe58a;color:#5a3d00;border-radius:3px;padding:0 .1rem;font-weight:700}
.asu-flags{list-style:none;padding:0!important;margin:.3rem 0 0!important}
.asu-flags li,.asu-flagline{color:#8a1c00;font-size:.85rem}
.asu-flags li::before{content:"\26A0\FE0E  "}
.asu-domain{margin:.35rem 0 0;font-size:.9rem;padding:.3rem .5rem;border-radius:5px;background:#f7f7f9}
.asu-domain strong{font-weight:800;text-decoration:underline}
.asu-domain.asu-warned{background:#fff0ec;border:1px solid #e8a08e}
.asu-dlabel{color:#66666f}
.asu-dnote{color:#55555f}
.asu-badge{display:inline-block;font-size:.75rem;font-weight:700;border-radius:4px;padding:0 .35rem}
.asu-badge-ok{background:#dff2dc;color:#1f5a19}
.asu-hash{font-size:.8rem}
.asu-unbound{background:#fffbea}
.asu-context dl{display:grid;grid-template-columns:9rem 1fr;gap:.25rem .75rem;margin:0}
.asu-context dt{color:#66666f}
.asu-context dd{margin:0}
.asu-untrusted{background:repeating-linear-gradient(135deg,#f4f4f6,#f4f4f6 10px,#ececf0 10px,#ececf0 20px);border-top:3px dashed #9a9aa5}
.asu-untrusted h3{color:#44444c}
.asu-agent-text{margin:0;padding:.6rem .75rem;background:#fff;border:1px dashed #9a9aa5;border-radius:5px;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;font-size:.85rem;color:#33333a;max-height:16rem;overflow:auto}
.asu-none{margin:0;color:#77777f}
.asu-long summary{cursor:pointer}
.asu-foot{padding:.6rem 1.25rem;font-size:.85rem;color:#55555f;background:#f6f6f8}
`
