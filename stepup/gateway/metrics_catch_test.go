package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	auditfigures "github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestCatchRatesAreMetrics: practice requests the approver catches and
// misses, in a random order, are counted by the gate's own counter (by
// class and outcome, naming nobody) and, from the figures, as the
// approver's catch rate with its interval and the below-the-floor flag;
// the pending gauge ends each practice request's count when it is
// decided, so it reads exactly the real requests still waiting.
func TestCatchRatesAreMetrics(t *testing.T) {
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			ctx := context.Background()
			m, err := gateway.NewMetrics()
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Shutdown(ctx) })
			w := stepuptest.NewWorld(t, gate.WithPractice("", 1), gate.WithoutFloodControlUnsafe(),
				gate.WithMeterProvider(m.MeterProvider()))
			m.ServeFigures(func(ctx context.Context) (auditfigures.Report, error) {
				return w.Gate.Admin().Metrics(ctx, 24*time.Hour)
			})
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)

			n := 1 + rng.IntN(12)
			real := map[stepup.TicketID]bool{}
			for i := range n {
				call := stepuptest.SendEmail(fmt.Sprintf("finance+%d@example.com", i))
				call.Session = fmt.Sprintf("sess-%d", i)
				tk, err := w.Gate.Propose(ctx, call)
				require.NoError(t, err)
				real[tk.ID] = true
			}
			require.NoError(t, w.Gate.Settle(ctx))
			q, err := w.Gate.Desk().Queue(ctx, stepuptest.Approver, 1000)
			require.NoError(t, err)
			caught, missed := 0, 0
			for _, e := range q {
				if real[e.Ticket.ID] {
					continue
				}
				if rng.IntN(3) == 0 {
					_, err = w.Approve(e.Ticket.ID)
					missed++
				} else {
					_, err = w.Deny(e.Ticket.ID, "looks wrong")
					caught++
				}
				require.NoError(t, err)
			}
			require.Equal(t, n, caught+missed, "one practice request after each real one")

			got, body := scrape(t, srv.URL+gateway.MetricsPath)
			gauge := func(series string) float64 {
				t.Helper()
				v, ok := got[series]
				require.True(t, ok, "%s missing in\n%s", series, body)
				return v
			}
			counter := func(outcome string, want int) {
				t.Helper()
				series := `asu_gate_practice_total{asu_effect_class=external,asu_practice_class=lookalike-domain,asu_practice_outcome=` + outcome + `}`
				if want == 0 {
					assert.NotContains(t, got, series)
					return
				}
				assert.Equal(t, float64(want), gauge(series))
			}
			counter("caught", caught)
			counter("missed", missed)
			assert.Equal(t, float64(n), gauge(`asu_gate_pending{asu_effect_class=external}`), "only the real requests wait")

			f, err := w.Gate.Admin().Metrics(ctx, 24*time.Hour)
			require.NoError(t, err)
			c := f.ByApprover[stepuptest.Approver].Catch
			require.NotNil(t, c)
			who := `{approver=` + stepuptest.Approver + `}`
			assert.Equal(t, 1.0, gauge(`asu_figures_up{}`))
			assert.Equal(t, auditfigures.DefaultCatchFloor, gauge(`asu_figures_catch_floor{}`))
			assert.InDelta(t, float64(caught)/float64(n), gauge(`asu_figures_catch_rate`+who), 1e-9)
			assert.InDelta(t, c.Low, gauge(`asu_figures_catch_rate_low`+who), 1e-9)
			assert.InDelta(t, c.High, gauge(`asu_figures_catch_rate_high`+who), 1e-9)
			below := 0.0
			if c.High < auditfigures.DefaultCatchFloor {
				below = 1
			}
			assert.Equal(t, below, gauge(`asu_figures_below_catch_floor`+who))
			cls := `{approver=` + stepuptest.Approver + `,asu_effect_class=external`
			assert.InDelta(t, float64(caught)/float64(n), gauge(`asu_figures_class_catch_rate`+cls+`}`), 1e-9)
			assert.Equal(t, float64(caught), gauge(`asu_figures_practice_requests`+cls+`,asu_practice_outcome=caught}`))
			assert.Equal(t, float64(missed), gauge(`asu_figures_practice_requests`+cls+`,asu_practice_outcome=missed}`))
			for id := range real {
				assert.NotContains(t, body, string(id), "no ticket id in the metrics")
			}
			assert.NotContains(t, body, "finance", "no argument in the metrics")
			assert.NotContains(t, body, audit.PracticeSession, "no session in the metrics")
		})
	}
}

// TestCatchMetricsSayWhenTheFiguresCannotBeRead: a failing read of the
// figures is asu_figures_up 0 and no rate, never a rate of zero; the
// gate's own metrics are still served.
func TestCatchMetricsSayWhenTheFiguresCannotBeRead(t *testing.T) {
	m, err := gateway.NewMetrics()
	require.NoError(t, err)
	h := stepuptest.NewGate(t, nil, gate.WithMeterProvider(m.MeterProvider()))
	m.ServeFigures(func(context.Context) (auditfigures.Report, error) {
		return auditfigures.Report{}, errors.New("store down")
	})
	_, err = h.Gate.Propose(context.Background(), sendEmail("finance@example.com"))
	require.NoError(t, err)
	srv := httptest.NewServer(m)
	defer srv.Close()
	got, body := scrape(t, srv.URL+gateway.MetricsPath)
	assert.Equal(t, 0.0, got[`asu_figures_up{}`], body)
	assert.NotContains(t, body, "asu_figures_catch_rate")
	assert.Equal(t, 1.0, got[`asu_gate_pending{asu_effect_class=external}`])
}
