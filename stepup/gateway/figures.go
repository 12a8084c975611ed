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
func (m *Metrics) ServeFigures(figures func(ctx context.Context) (auditfigures.Report, error)) {
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
		if err := figuresPage.Execute(w, figuresView(f)); err != nil {
			return // the client went away
		}
	})
}

// figureRow is one line of the page. Asked and Lapsed are shown for
// classes only: a call is put to a group, not to one approver.
type figureRow struct {
	Name                               string
	Class                              bool
	Asked, Approvals, Denials, Lapsed  int
	Rate, Median, P90, PerHour, Active string
	RubberStamp                        bool
}

type figuresData struct {
	Window, PeakHour   string
	Classes, Approvers []figureRow
	Overall            figureRow
	Warnings           []string
}

// noDecisions is what a rate or a decision time reads as when nobody has
// decided yet.
const noDecisions = "no decisions yet"

func decisionCells(r *figureRow, d auditfigures.Decisions, p auditfigures.Pace) {
	r.Approvals, r.Denials, r.RubberStamp = d.Approvals, d.Denials, d.RubberStamp
	r.Rate, r.Median, r.P90, r.PerHour = noDecisions, noDecisions, noDecisions, "not measured"
	if d.ApprovalRate != nil {
		r.Rate = fmt.Sprintf("%.0f%%", 100**d.ApprovalRate)
	}
	if d.Time != nil {
		r.Median = d.Time.Median().Round(100 * time.Millisecond).String()
		r.P90 = d.Time.P90().Round(100 * time.Millisecond).String()
	}
	if p.ApprovalsPerActiveHour != nil {
		r.PerHour = fmt.Sprintf("%.1f", *p.ApprovalsPerActiveHour)
	}
	r.Active = (time.Duration(p.ActiveMillis) * time.Millisecond).Round(time.Second).String()
}

func figuresView(m auditfigures.Report) figuresData {
	class := func(name string, c auditfigures.Class) figureRow {
		r := figureRow{Name: name, Class: true, Asked: c.Asked, Lapsed: c.Lapsed}
		decisionCells(&r, c.Decisions, c.Pace)
		return r
	}
	d := figuresData{Overall: class("all", m.Overall), Warnings: m.Warnings, Window: "no records", PeakHour: "no approvals"}
	at := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC") }
	if w := m.Window; w != nil {
		d.Window = fmt.Sprintf("%d records from %s to %s", w.Records, at(w.From), at(w.To))
	}
	if p := m.PeakHour; p != nil {
		d.PeakHour = fmt.Sprintf("%d approvals in the hour from %s", p.Approvals, at(p.Start))
	}
	for _, name := range slices.Sorted(maps.Keys(m.ByClass)) {
		d.Classes = append(d.Classes, class(name, m.ByClass[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(m.ByApprover)) {
		a := m.ByApprover[name]
		r := figureRow{Name: name}
		decisionCells(&r, a.Decisions, a.Pace)
		d.Approvers = append(d.Approvers, r)
	}
	return d
}

// figureTable is one table of the page.
type figureTable struct {
	Title string
	Class bool // a table of classes, with the columns only classes have
	Rows  []figureRow
}

var figuresPage = template.Must(template.New("figures").Funcs(template.FuncMap{
	"rows": func(title string, rows []figureRow, more ...figureRow) figureTable {
		return figureTable{Title: title, Class: title == "class", Rows: append(slices.Clone(rows), more...)}
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Approval figures</title></head>
<body>
<h1>Approval figures</h1>
<p>An approval rate near 100% with decisions in a few seconds means nobody is reading.</p>
<p>Window: {{.Window}}. Busiest hour: {{.PeakHour}}.</p>
{{if .Warnings}}<h2>Warnings</h2><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{define "table"}}<table>
<tr><th>{{.Title}}</th>{{if .Class}}<th>asked (calls put to a person)</th>{{end}}<th>approvals</th><th>denials</th>{{if .Class}}<th>lapsed (expired or cancelled)</th>{{end}}<th>approval rate</th><th>median decision</th><th>p90 decision</th><th>active time</th><th>approvals per active hour</th><th></th></tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{if .Class}}<td>{{.Asked}}</td>{{end}}<td>{{.Approvals}}</td><td>{{.Denials}}</td>{{if .Class}}<td>{{.Lapsed}}</td>{{end}}<td>{{.Rate}}</td><td>{{.Median}}</td><td>{{.P90}}</td><td>{{.Active}}</td><td>{{.PerHour}}</td><td>{{if .RubberStamp}}RUBBER-STAMP{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>By effect class</h2>
{{template "table" (rows "class" .Classes .Overall)}}
<h2>By approver</h2>
{{template "table" (rows "approver" .Approvers)}}
</body></html>
`))
