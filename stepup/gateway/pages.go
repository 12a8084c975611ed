package gateway

import (
	"embed"
	"html/template"
	"time"

	"github.com/agentstepup/asu/card"
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
<section class="asu-decide" id="asu-decide" data-ticket="{{.ID}}" data-approve="{{.ApproveOptions}}" data-deny="{{.DenyOptions}}">
<p>Your passkey signs this card and exactly this action. It runs at most once, before it expires.</p>
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

{{define "enroll"}}{{template "head" "Enroll a passkey"}}
<body><div class="asu-site">
<header><strong>Enroll a passkey</strong><span>{{.RP}}</span></header>
<main>
<section class="asu-enroll" id="asu-enroll" data-invite="{{.Invite}}" data-options="{{.Options}}">
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
<main><section class="asu-notice"><p>{{.Text}}</p></section></main>
</div></body></html>
{{end}}
`))

type approvePage struct {
	Title, ID, Expires          string
	Card                        template.HTML // written by card's own escaper
	ApproveOptions, DenyOptions string
}

type enrollPage struct {
	RP, User, Invite, Options string
}

type noticePage struct {
	Title, Text string
}

// siteCSS is card's style sheet followed by the page's own.
func siteCSS() []byte {
	own, _ := staticFS.ReadFile("static/site.css")
	return append([]byte(card.CSS+"\n"), own...)
}

func expiry(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
