package gateway

import (
	"context"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"time"

	auditfigures "github.com/agentstepup/asu/audit/figures"
)

// FiguresPath is where [Metrics.ServeFigures] answers: the page at
// FiguresPath, the JSON at FiguresPath + ".json".
const FiguresPath = "/approvals"

// figuresTimeout bounds one read of the figures.
const figuresTimeout = 10 * time.Second

// ServeFigures adds the approval figures to what m serves, on the
// operator's listener: read by figures (the gate's Admin().Metrics over a
// window), as a page at GET [FiguresPath] and as JSON at GET
// FiguresPath.json: per effect class and per approver, the approval
// rate, median and p90 time to decision, active time and approvals per
// active hour, the window and the busiest hour, and the rubber-stamp
// warnings. Unlike the Prometheus metrics they name
// approvers, so they belong to operators; never serve them to agents.
//
// The catch rates of practice requests are also added to the metrics
// at GET [MetricsPath], read from the same figures (see [CatchMetrics]
// for the names): a scraper can alert on an approver below the floor.
// Like the figures they name approvers.
//
// The page is styled by its own sheet at FiguresPath + ".css" (nothing
// inline, under the same Content-Security-Policy as the approval site)
// and reads on a 390 px phone. Pass [FiguresWindow] to have it name the
// window the figures cover.
func (m *Metrics) ServeFigures(figures func(ctx context.Context) (auditfigures.Report, error), opts ...FiguresOption) {
	var conf figuresConfig
	for _, o := range opts {
		o(&conf)
	}
	m.reg.MustRegister(newCatchCollector(figures))
	read := func(w http.ResponseWriter, r *http.Request) (auditfigures.Report, bool) {
		ctx, cancel := context.WithTimeout(r.Context(), figuresTimeout)
		defer cancel()
		f, err := figures(ctx)
		if err != nil {
			http.Error(w, "the figures could not be read", http.StatusServiceUnavailable)
			return f, false
		}
		return f, true
	}
	m.mux.HandleFunc("GET "+FiguresPath+".json", func(w http.ResponseWriter, r *http.Request) {
		if f, ok := read(w, r); ok {
			writeJSON(w, http.StatusOK, f)
		}
	})
	m.mux.HandleFunc("GET "+FiguresPath, func(w http.ResponseWriter, r *http.Request) {
		f, ok := read(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := figuresPage.Execute(w, figuresView(f, conf)); err != nil {
			return // the client went away
		}
	})
	m.mux.HandleFunc("GET "+FiguresPath+".css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write(figuresCSS())
	})
}

// FiguresOption tunes the figures page of [Metrics.ServeFigures].
type FiguresOption func(*figuresConfig)

type figuresConfig struct {
	window time.Duration
}

// FiguresWindow has the figures page name the window its figures cover
// (the window given to the gate's Admin().Metrics).
func FiguresWindow(d time.Duration) FiguresOption {
	return func(c *figuresConfig) { c.window = d }
}

// figureRow is one line of a table of the page. Every column means one
// thing; a figure the row has none of reads "no decisions yet" or "not
// measured", never zero. Asked and Lapsed are shown for classes only: a
// call is put to a group, not to one approver.
type figureRow struct {
	Name                               string
	Asked, Approvals, Denials, Lapsed  int
	WrongPicks                         int // look-alike picks refused (gate.WithConfirmation)
	Decided                            int
	Rate, Median, P90, PerHour, Active string
	Catch                              string
	RubberStamp                        bool
}

type figuresData struct {
	Window, Span       string
	PeakHour, PeakFrom string
	Overall            figureRow
	Classes, Approvers []figureRow
	Warnings           []string
	Rule               string
}

// noDecisions is what a rate or a decision time reads as when nobody has
// decided yet.
const noDecisions = "no decisions yet"

func decisionCells(r *figureRow, d auditfigures.Decisions, p auditfigures.Pace) {
	r.Approvals, r.Denials, r.RubberStamp = d.Approvals, d.Denials, d.RubberStamp
	r.WrongPicks = d.WrongPicks
	r.Decided = d.Approvals + d.Denials
	r.Rate, r.Median, r.P90, r.PerHour = noDecisions, noDecisions, noDecisions, "not measured"
	if d.ApprovalRate != nil {
		r.Rate = fmt.Sprintf("%.0f%%", 100**d.ApprovalRate)
	}
	if d.Time != nil {
		r.Median, r.P90 = seconds(d.Time.Median()), seconds(d.Time.P90())
	}
	if p.ApprovalsPerActiveHour != nil {
		r.PerHour = fmt.Sprintf("%.1f", *p.ApprovalsPerActiveHour)
	}
	r.Catch = "none"
	if c := d.Catch; c != nil {
		r.Catch = fmt.Sprintf("%d of %d (%.0f%%, 95%%: %.0f to %.0f%%)", c.Caught, c.Caught+c.Missed, 100*c.Rate, 100*c.Low, 100*c.High)
	}
	r.Active = "not measured"
	if p.ActiveMillis > 0 {
		r.Active = active(time.Duration(p.ActiveMillis) * time.Millisecond)
	}
}

func figuresView(m auditfigures.Report, conf figuresConfig) figuresData {
	class := func(name string, c auditfigures.Class) figureRow {
		r := figureRow{Name: name, Asked: c.Asked, Lapsed: c.Lapsed}
		decisionCells(&r, c.Decisions, c.Pace)
		return r
	}
	d := figuresData{Overall: class("all", m.Overall), Warnings: m.Warnings, Window: "no records", PeakHour: "none"}
	if conf.window > 0 {
		d.Span = "the last " + span(conf.window)
	}
	at := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04 UTC") }
	if w := m.Window; w != nil {
		d.Window = fmt.Sprintf("%d records from %s to %s", w.Records, at(w.From), at(w.To))
	}
	if p := m.PeakHour; p != nil {
		d.PeakHour, d.PeakFrom = fmt.Sprint(p.Approvals), "approvals in the hour from "+at(p.Start)
	}
	if r := m.Rule; r.MinDecisions > 0 {
		d.Rule = fmt.Sprintf("more than %.0f%% approved with a median decision under %s, over at least %d decisions",
			100*r.Rate, seconds(r.Median), r.MinDecisions)
	}
	for _, name := range slices.Sorted(maps.Keys(m.ByClass)) {
		d.Classes = append(d.Classes, class(name, m.ByClass[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(m.ByApprover)) {
		a := m.ByApprover[name]
		r := figureRow{Name: name}
		decisionCells(&r, a.Decisions, a.Pace)
		if len(a.CatchByClass) > 1 { // one class says nothing the cell does not
			for _, class := range slices.Sorted(maps.Keys(a.CatchByClass)) {
				c := a.CatchByClass[class]
				r.Catch += fmt.Sprintf("; %s: %d of %d", class, c.Caught, c.Caught+c.Missed)
			}
		}
		d.Approvers = append(d.Approvers, r)
	}
	return d
}

// seconds words a decision time for the page: 2.4 s, 3 min 05 s.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// active words an active time: 40 s, 12 min, 2 h 05 min.
func active(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	m := int(d.Round(time.Minute) / time.Minute)
	return fmt.Sprintf("%d h %02d min", m/60, m%60)
}

// span words a window: 7 days, 24 hours, 90 minutes (days from two on).
func span(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return plural(int(d/(24*time.Hour)), "day")
	case d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d.Round(time.Minute)/time.Minute), "minute")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// figureTable is one table of the page; People tables have no asked or
// lapsed columns (a person decides, a request is not theirs).
type figureTable struct {
	Title, Caption string
	People         bool
	Rows           []figureRow
}

// figuresCSS is the site's style sheet followed by the figures page's own.
func figuresCSS() []byte {
	own, _ := staticFS.ReadFile("static/figures.css")
	site, _ := staticFS.ReadFile("static/site.css")
	return append(append(site, '\n'), own...)
}

var figuresPage = template.Must(template.New("figures").Funcs(template.FuncMap{
	"table": func(title, caption string, people bool, rows []figureRow, more ...figureRow) figureTable {
		return figureTable{Title: title, Caption: caption, People: people, Rows: append(slices.Clone(rows), more...)}
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Approval figures</title>
<link rel="stylesheet" href="` + FiguresPath + `.css">
</head>
<body><div class="asu-site asu-figures">
<header><strong>Approval figures</strong><span>{{if .Span}}{{.Span}}{{else}}the gate's window{{end}}</span></header>
<main>
<section class="asu-figures-head">
{{if .Overall.Decided}}<dl class="asu-tiles">
<div><dt>decided</dt><dd>{{.Overall.Decided}}</dd></div>
<div><dt>approved</dt><dd>{{.Overall.Rate}}</dd></div>
<div><dt>median decision</dt><dd>{{.Overall.Median}}</dd></div>
<div><dt>busiest hour</dt><dd>{{.PeakHour}}{{if .PeakFrom}} <small>{{.PeakFrom}}</small>{{end}}</dd></div>
</dl>{{else}}<p class="asu-none">No decisions yet{{if .Span}} in {{.Span}}{{end}}.</p>{{end}}
<p class="asu-note">Window: {{.Window}}.</p>
<p class="asu-note">An approval rate near 100% with decisions in a few seconds means nobody is reading.{{if .Rule}} Flagged as rubber-stamping: {{.Rule}}.{{end}}</p>
</section>
{{if .Warnings}}<section class="asu-warnings"><h2>Warnings</h2><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
{{define "table"}}<section class="asu-table"><h2>{{.Title}}</h2><p class="asu-note">{{.Caption}}</p>
<table>
<thead><tr><th scope="col">{{if .People}}approver{{else}}class{{end}}</th>{{if not .People}}<th scope="col">asked</th>{{end}}<th scope="col">approvals</th><th scope="col">denials</th><th scope="col">wrong picks</th>{{if not .People}}<th scope="col">lapsed</th>{{end}}<th scope="col">approval rate</th><th scope="col">median decision</th><th scope="col">p90 decision</th><th scope="col">active time</th><th scope="col">approvals per active hour</th><th scope="col">practice caught</th><th scope="col">flag</th></tr></thead>
<tbody>{{range .Rows}}<tr{{if .RubberStamp}} class="asu-flagged"{{end}}><th scope="row" data-label="{{if $.People}}approver{{else}}class{{end}}">{{.Name}}</th>{{if not $.People}}<td data-label="asked">{{.Asked}}</td>{{end}}<td data-label="approvals">{{.Approvals}}</td><td data-label="denials">{{.Denials}}</td><td data-label="wrong picks">{{.WrongPicks}}</td>{{if not $.People}}<td data-label="lapsed">{{.Lapsed}}</td>{{end}}<td data-label="approval rate">{{.Rate}}</td><td data-label="median decision">{{.Median}}</td><td data-label="p90 decision">{{.P90}}</td><td data-label="active time">{{.Active}}</td><td data-label="approvals per active hour">{{.PerHour}}</td><td data-label="practice caught">{{.Catch}}</td><td data-label="flag">{{if .RubberStamp}}<strong>rubber-stamp</strong>{{end}}</td></tr>
{{else}}<tr><td colspan="12" class="asu-none">No decisions yet.</td></tr>{{end}}</tbody>
</table></section>{{end}}
{{template "table" (table "By effect class" "Asked: calls put to a person. Lapsed: expired or withdrawn before anyone decided. The last row is every class together." false .Classes .Overall)}}
{{template "table" (table "By approver" "Each person's own decisions. Calls are put to groups, not to one person, so asked and lapsed are counted by class only." true .Approvers)}}
</main></div>
</body></html>
`))
