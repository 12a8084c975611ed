package gateway

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	auditfigures "github.com/agentstepup/asu/audit/figures"
)

// CatchMetrics are the names of the catch-rate metrics [Metrics.ServeFigures]
// adds beside the gate's own, each a gauge read from the figures at
// scrape time (at most once per [CatchMetricsMaxAge]):
//
//	asu_figures_up                      1 when the figures could be read, 0 when not
//	asu_figures_catch_floor             the floor of the figures' rule
//	asu_figures_catch_rate              {approver}: caught / decided practice requests
//	asu_figures_catch_rate_low          {approver}: the low end of its Wilson 95% interval
//	asu_figures_catch_rate_high         {approver}: the high end
//	asu_figures_below_catch_floor       {approver}: 1 when the whole interval lies below the floor
//	asu_figures_class_catch_rate        {approver, asu_effect_class}: the rate in one class
//	asu_figures_class_catch_rate_low    {approver, asu_effect_class}
//	asu_figures_class_catch_rate_high   {approver, asu_effect_class}
//	asu_figures_practice_requests       {approver, asu_effect_class, asu_practice_outcome}: caught or missed, in the window
//
// An approver appears once they have decided a practice request in the
// figures' window. An alert on asu_figures_below_catch_floor == 1 names
// the approver to talk to; the interval keeps one unlucky day from
// naming anyone.
var CatchMetrics = []string{
	"asu_figures_up", "asu_figures_catch_floor",
	"asu_figures_catch_rate", "asu_figures_catch_rate_low", "asu_figures_catch_rate_high",
	"asu_figures_below_catch_floor",
	"asu_figures_class_catch_rate", "asu_figures_class_catch_rate_low", "asu_figures_class_catch_rate_high",
	"asu_figures_practice_requests",
}

// CatchMetricsMaxAge is how long a scrape may be answered from the figures
// the last one read: the figures read the audit of a whole window, and a
// scraper every few seconds should not read it every few seconds.
const CatchMetricsMaxAge = 15 * time.Second

// catchCollector serves the catch rates of the figures as Prometheus
// gauges.
type catchCollector struct {
	figures func(ctx context.Context) (auditfigures.Report, error)
	now     func() time.Time

	mu     sync.Mutex
	at     time.Time
	report auditfigures.Report
	ok     bool

	up, floor                 *prometheus.Desc
	rate, low, high, below    *prometheus.Desc
	cRate, cLow, cHigh, count *prometheus.Desc
}

func newCatchCollector(figures func(ctx context.Context) (auditfigures.Report, error)) *catchCollector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	approver, class := []string{"approver"}, []string{"approver", "asu_effect_class"}
	return &catchCollector{
		figures: figures,
		now:     time.Now,
		up:      desc("asu_figures_up", "1 when the approval figures could be read for this scrape, 0 when not."),
		floor:   desc("asu_figures_catch_floor", "The least catch rate of practice requests an approver should keep."),
		rate:    desc("asu_figures_catch_rate", "Share of the practice requests put to the approver that they caught (denied).", approver...),
		low:     desc("asu_figures_catch_rate_low", "Low end of the Wilson 95% interval of the approver's catch rate.", approver...),
		high:    desc("asu_figures_catch_rate_high", "High end of the Wilson 95% interval of the approver's catch rate.", approver...),
		below:   desc("asu_figures_below_catch_floor", "1 when the whole interval of the approver's catch rate lies below the floor.", approver...),
		cRate:   desc("asu_figures_class_catch_rate", "The approver's catch rate of practice requests in one effect class.", class...),
		cLow:    desc("asu_figures_class_catch_rate_low", "Low end of the Wilson 95% interval of the approver's catch rate in one class.", class...),
		cHigh:   desc("asu_figures_class_catch_rate_high", "High end of the Wilson 95% interval of the approver's catch rate in one class.", class...),
		count: desc("asu_figures_practice_requests", "Practice requests the approver decided in the figures' window, by class and outcome.",
			"approver", "asu_effect_class", "asu_practice_outcome"),
	}
}

// Describe sends every descriptor c may collect.
func (c *catchCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.floor, c.rate, c.low, c.high, c.below, c.cRate, c.cLow, c.cHigh, c.count} {
		ch <- d
	}
}

// read returns the figures, read again when the last read is older than
// CatchMetricsMaxAge (or failed), and whether they could be read.
func (c *catchCollector) read() (auditfigures.Report, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.ok && now.Sub(c.at) < CatchMetricsMaxAge && !now.Before(c.at) {
		return c.report, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), figuresTimeout)
	defer cancel()
	r, err := c.figures(ctx)
	c.report, c.ok, c.at = r, err == nil, now
	return r, c.ok
}

// Collect sends the catch-rate gauges of the figures.
func (c *catchCollector) Collect(ch chan<- prometheus.Metric) {
	r, ok := c.read()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if !ok {
		gauge(c.up, 0)
		return
	}
	gauge(c.up, 1)
	gauge(c.floor, r.Rule.CatchFloor)
	for _, name := range slices.Sorted(maps.Keys(r.ByApprover)) {
		a := r.ByApprover[name]
		if a.Catch == nil {
			continue
		}
		gauge(c.rate, a.Catch.Rate, name)
		gauge(c.low, a.Catch.Low, name)
		gauge(c.high, a.Catch.High, name)
		below := 0.0
		if a.Catch.High < r.Rule.CatchFloor {
			below = 1
		}
		gauge(c.below, below, name)
		for _, class := range slices.Sorted(maps.Keys(a.CatchByClass)) {
			k := a.CatchByClass[class]
			gauge(c.cRate, k.Rate, name, class)
			gauge(c.cLow, k.Low, name, class)
			gauge(c.cHigh, k.High, name, class)
			gauge(c.count, float64(k.Caught), name, class, "caught")
			gauge(c.count, float64(k.Missed), name, class, "missed")
		}
	}
}
