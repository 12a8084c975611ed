package gateway

import (
	"embed"
	"html/template"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
)

//go:embed static
var staticFS embed.FS

// Every page loads its script and style from this origin only; nothing is
// inline, so the Content-Security-Policy forbids inline script and style.
var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.}}</title>
<link rel="stylesheet" href="/static/site.css">
</head>{{end}}

{{define "approve"}}{{template "head" .Title}}
<body><div class="asu-site">
<header><strong>Approval requested</strong><span>ticket {{.ID}} · expires {{.Expires}}</span></header>
<main>
{{.Card}}
<section class="asu-decide" id="asu-decide" data-ticket="{{.ID}}" data-origin="{{.Origin}}" data-approve="{{.ApproveOptions}}" data-deny="{{.DenyOptions}}" data-view="{{.View}}">
{{if .Progress}}<p class="asu-progress" id="asu-progress">{{.Progress}}.</p>{{end}}
<p class="asu-who">May approve: {{range $i, $u := .Who}}{{if $i}}, {{end}}<strong>{{$u}}</strong>{{end}}. Nobody else's passkey is accepted.</p>
<p>Your passkey signs this card and exactly this action. It runs at most once, before it expires.</p>
{{.Summary}}
{{if .Confirm.Choices}}<fieldset class="asu-confirm" id="asu-confirm"><legend>Before approving: which {{.Confirm.Asks}} does the card show?</legend>
{{range .Confirm.Choices}}<label><input type="radio" name="asu-pick" value="{{.Pick}}"> <code>{{.Text}}</code></label>
{{end}}</fieldset>{{end}}
<div class="asu-actions">
<button id="asu-approve" type="button">Approve with passkey</button>
<button id="asu-deny" type="button">Deny with passkey</button>
</div>
<label for="asu-reason">Reason for a denial (the agent is shown it)</label>
<input id="asu-reason" type="text" maxlength="280" autocomplete="off">
<p id="asu-status" class="asu-status" role="status"></p>
</section>
</main></div>
<script src="/static/webauthn.js"></script>
<script src="/static/approve.js"></script>
</body></html>
{{end}}

{{define "revoke"}}{{template "head" .Title}}
<body><div class="asu-site">
<header><strong>Approved, not run yet</strong><span>ticket {{.ID}} · expires {{.Expires}}</span></header>
<main>
<section class="asu-decide" id="asu-revoke" data-ticket="{{.ID}}" data-origin="{{.Origin}}" data-revoke="{{.RevokeOptions}}">
{{if .Lapsed}}<p class="asu-progress" id="asu-progress">This approval no longer holds: {{.Progress}}. It will not run; the agent has to ask again.</p>
{{else if .Progress}}<p class="asu-progress" id="asu-progress">{{.Progress}}.</p>{{end}}
<p>This request (<strong>{{.Tool}}</strong>, digest <span class="asu-mono">{{.Digest}}</span>) is {{.Status}} and has not run.
Until it runs or expires, anyone who may decide it can revoke the approval; a revoked approval never runs.</p>
<p class="asu-who">May revoke: {{range $i, $u := .Approvers}}{{if $i}}, {{end}}<strong>{{$u}}</strong>{{end}}.</p>
<div class="asu-actions">
<button id="asu-revoke-button" type="button">Revoke with passkey</button>
</div>
<label for="asu-reason">Reason (the audit log keeps it)</label>
<input id="asu-reason" type="text" maxlength="280" autocomplete="off">
<p id="asu-status" class="asu-status" role="status"></p>
</section>
</main></div>
<script src="/static/webauthn.js"></script>
<script src="/static/approve.js"></script>
</body></html>
{{end}}

{{define "enroll"}}{{template "head" "Enroll a passkey"}}
<body><div class="asu-site">
<header><strong>Enroll a passkey</strong><span>{{.RP}}</span></header>
<main>
<section class="asu-enroll" id="asu-enroll" data-origin="{{.Origin}}" data-invite="{{.Invite}}" data-options="{{.Options}}">
<p>This invite enrolls a passkey for <strong>{{.User}}</strong>. Approval links will ask for it.
The invite works once.</p>
<button id="asu-create" type="button">Create passkey</button>
<p id="asu-status" class="asu-status" role="status"></p>
</section>
</main></div>
<script src="/static/webauthn.js"></script>
<script src="/static/enroll.js"></script>
</body></html>
{{end}}

{{define "notice"}}{{template "head" .Title}}
<body><div class="asu-site">
<header><strong>{{.Title}}</strong></header>
<main><section class="asu-notice"><p>{{.Text}}</p>{{if .Link}}
<p><a href="{{.Link}}">{{.Link}}</a></p>{{end}}</section></main>
</div></body></html>
{{end}}
`))

type approvePage struct {
	Title, ID, Origin, Expires  string
	Card                        template.HTML // written by card's own escaper
	Summary                     template.HTML // the card's own summary, right above the buttons
	Approvers                   []string
	ApproveOptions, DenyOptions string
	View                        string            // this rendering's view token, posted back when the card is shown
	Progress                    string            // who approved so far and who is awaited, when there is anything to say
	Awaited                     []string          // who may still approve
	Confirm                     gate.Confirmation // the options to pick the key value from; none when no pick is needed
}

// Who lists who may still approve: those awaited, or, when the page was
// given none, every approver.
func (p approvePage) Who() []string {
	if len(p.Awaited) > 0 {
		return p.Awaited
	}
	return p.Approvers
}

type revokePage struct {
	Title, ID, Tool, Digest, Status, Origin, Expires string
	Approvers                                        []string
	RevokeOptions                                    string
	// Progress says who approved; Lapsed, that approvals it counted no
	// longer do (an approver left the group or lost their passkey), so
	// it does not run.
	Progress string
	Lapsed   bool
}

type enrollPage struct {
	RP, User, Invite, Options, Origin string
}

type noticePage struct {
	Title, Text string
	Link        string // a URL to go on to, shown as a link
}

// siteCSS is card's style sheet followed by the page's own.
func siteCSS() []byte {
	own, _ := staticFS.ReadFile("static/site.css")
	return append([]byte(card.CSS+"\n"), own...)
}

func expiry(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
