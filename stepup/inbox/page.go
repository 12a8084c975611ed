package inbox

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
)

//go:embed static
var staticFS embed.FS

// assets are the page's script, and its style after the card's.
func assets() (map[string]asset, error) {
	js, err := staticFS.ReadFile("static/inbox.js")
	if err != nil {
		return nil, fmt.Errorf("%w: inbox script: %v", stepup.ErrConfig, err)
	}
	css, err := staticFS.ReadFile("static/inbox.css")
	if err != nil {
		return nil, fmt.Errorf("%w: inbox style: %v", stepup.ErrConfig, err)
	}
	return map[string]asset{
		"inbox.js":  {"text/javascript; charset=utf-8", js},
		"inbox.css": {"text/css; charset=utf-8", append([]byte(card.CSS+"\n"), css...)},
	}, nil
}

func (in *Inbox) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := in.static[r.PathValue("name")]
	if !ok {
		in.refuse(w, r, errNotFound)
		return
	}
	w.Header().Set("Content-Type", a.typ)
	_, _ = w.Write(a.body)
}

// The page is a shell: what it lists comes from the session's stream, so
// a link followed from another site (which carries no SameSite=Strict
// cookie) still shows the queue once the page's own requests run. Its
// script and style are files of this origin; nothing is inline.
var pageTemplate = template.Must(template.New("inbox").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Approvals inbox</title>
<link rel="stylesheet" href="{{.Prefix}}/static/inbox.css">
</head>
<body data-inbox="loading"><div class="inbox" id="inbox" data-origin="{{.Origin}}" data-prefix="{{.Prefix}}" data-approve="{{.Approve}}" data-dwell="{{.DwellMS}}">
<header class="inbox-bar">
<strong>Approvals</strong>
<span id="inbox-count" class="inbox-count" aria-live="polite"></span>
<span id="inbox-who" class="inbox-who"></span>
<span id="inbox-live" class="inbox-live" aria-live="polite"></span>
<button id="inbox-signout" type="button" class="inbox-quiet" hidden>Sign out</button>
</header>
<p id="inbox-figures" class="inbox-figures" hidden></p>
<main>
{{if .Misdirected}}<section class="inbox-panel"><p>Passkeys work only on the origin they were made for, {{.Origin}}. Open the inbox there instead:</p>
<p><a href="{{.Misdirected}}">{{.Misdirected}}</a></p></section>{{else}}
<section id="inbox-signin" class="inbox-panel" hidden>
<p>Sign in with your passkey to see the requests you may decide.</p>
<p class="inbox-note">Signing in only lists them. Each approval or denial asks for your passkey again, for that one request.</p>
<button id="inbox-signin-button" type="button" class="inbox-primary">Sign in with passkey</button>
</section>
<section id="inbox-queue" hidden>
<p id="inbox-empty" class="inbox-panel inbox-empty" hidden>Nothing to decide. New requests appear here as they arrive.</p>
<ol id="inbox-list" class="inbox-list" aria-label="Requests you may decide, soonest expiry first"></ol>
<p class="inbox-keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move and open, <kbd>Enter</kbd> open or close, <kbd>a</kbd> approve, <kbd>d</kbd> deny, <kbd>o</kbd> open the request's page.</p>
</section>{{end}}
<p id="inbox-status" class="inbox-status" role="status"></p>
</main></div>
<script src="{{.Prefix}}/static/inbox.js"></script>
</body></html>
`))

type pageData struct {
	Origin, Prefix, Approve string
	DwellMS                 int64  // how long an approve button waits after its card is shown
	Misdirected             string // the URL to open instead, on the wrong host
}

func (in *Inbox) page(w http.ResponseWriter, r *http.Request) {
	d := pageData{Origin: in.rp.Origin, Prefix: in.prefix, Approve: in.approve, DwellMS: in.dwell.Milliseconds(),
		Misdirected: in.misdirected(r.Host)}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		in.refuse(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if d.Misdirected != "" {
		w.WriteHeader(http.StatusMisdirectedRequest)
	}
	_, _ = w.Write(b.Bytes())
}

// misdirected returns the inbox's URL on the relying party's origin when
// the page was opened on another host of this machine (127.0.0.1 for
// localhost), where the browser would refuse the passkeys; "" otherwise.
// Behind a proxy, which may rewrite Host, the page's script compares the
// browser's own origin instead.
func (in *Inbox) misdirected(host string) string {
	u, err := url.Parse(in.rp.Origin)
	if err != nil || strings.EqualFold(host, u.Host) || !loopback(u.Hostname()) {
		return ""
	}
	return Link(in.rp.Origin, in.prefix)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
