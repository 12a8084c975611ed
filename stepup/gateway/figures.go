package gateway

import (
	"context"
	"fmt"
	"html/template"
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
// rate, median and p90 time to decision, approvals per reviewer-hour, and
// the rubber-stamp warnings. Unlike the Prometheus metrics they name
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

// figureRow is one line of the page.
type figureRow struct {
	Name                       string
	Requests, Approved, Denied int
	Rate, Median, P90, PerHour string
	RubberStamp                bool
}

type figuresData struct {
	Classes, Approvers []figureRow
	Overall            figureRow
	Warnings           []string
}

func figuresView(m auditfigures.Report) figuresData {
	row := func(name string, c auditfigures.Class) figureRow {
		return figureRow{Name: name, Requests: c.Requests, Approved: c.Approved, Denied: c.Denied,
			Rate: fmt.Sprintf("%.0f%%", 100*c.ApprovalRate), Median: c.MedianDecision.Round(100 * time.Millisecond).String(),
			P90: c.P90Decision.Round(100 * time.Millisecond).String(), PerHour: fmt.Sprintf("%.1f", c.ApprovalsPerReviewerHour),
			RubberStamp: c.RubberStamp}
	}
	d := figuresData{Overall: row("all", m.Overall), Warnings: m.Warnings}
	for _, name := range sortedNames(m.ByClass) {
		d.Classes = append(d.Classes, row(name, m.ByClass[name]))
	}
	for _, name := range sortedNames(m.ByApprover) {
		d.Approvers = append(d.Approvers, row(name, m.ByApprover[name]))
	}
	return d
}

func sortedNames(m map[string]auditfigures.Class) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// figureTable is one table of the page.
type figureTable struct {
	Title string
	Rows  []figureRow
}

var figuresPage = template.Must(template.New("figures").Funcs(template.FuncMap{
	"rows": func(title string, rows []figureRow, more ...figureRow) figureTable {
		return figureTable{Title: title, Rows: append(slices.Clone(rows), more...)}
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Approval figures</title></head>
<body>
<h1>Approval figures</h1>
<p>An approval rate near 100% with decisions in a few seconds means nobody is reading.</p>
{{if .Warnings}}<h2>Warnings</h2><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{define "table"}}<table>
<tr><th>{{.Title}}</th><th>requests</th><th>approved</th><th>denied</th><th>approval rate</th><th>median decision</th><th>p90 decision</th><th>approvals per reviewer-hour</th><th></th></tr>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.Requests}}</td><td>{{.Approved}}</td><td>{{.Denied}}</td><td>{{.Rate}}</td><td>{{.Median}}</td><td>{{.P90}}</td><td>{{.PerHour}}</td><td>{{if .RubberStamp}}RUBBER-STAMP{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>By effect class</h2>
{{template "table" (rows "class" .Classes .Overall)}}
<h2>By approver</h2>
{{template "table" (rows "approver" .Approvers)}}
</body></html>
`))
