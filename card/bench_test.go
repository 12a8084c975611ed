package card_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// benchEffect is a send_email call whose canonical form is about 1 KB.
func benchEffect(b *testing.B) canon.Effect {
	args, err := json.Marshal(map[string]any{
		"to":         "finance@example.com",
		"cc":         []string{"controller@example.com", "audit@example.org"},
		"subject":    "Q3 summary for the board meeting",
		"attachment": "q3.csv",
		"body":       strings.Repeat("Please find the Q3 numbers attached. ", 14),
		"priority":   3,
		"headers":    map[string]any{"X-Ticket": "118", "X-Retry": false},
	})
	if err != nil {
		b.Fatal(err)
	}
	e := effectWith(string(args))
	e.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Size: 33, SHA256: canon.Digest{7}}}
	c, err := e.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("canonical effect: %d bytes", len(c))
	return e
}

// BenchmarkRender measures Render alone and Render followed by each view,
// against a baseline measured in the same run: json.Marshal of the same
// effect. The "x-baseline" metric is the ratio to that baseline.
//
//	go test ./card -run '^$' -bench BenchmarkRender -benchmem
func BenchmarkRender(b *testing.B) {
	e := benchEffect(b)
	ctx := sendEmailContext()
	ctx.Hints.Labels["cc"] = "Cc"
	// The baseline runs first; the sub-benchmarks run in order, so its
	// figure is known when the others report their ratio.
	var base float64
	b.Run("baseline-json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	run := func(name string, view func(*card.Card)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := card.Render(e, ctx)
				if err != nil {
					b.Fatal(err)
				}
				view(c)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-baseline")
		})
	}
	run("render", func(*card.Card) {})
	run("render+text", func(c *card.Card) { _ = c.Text() })
	run("render+html", func(c *card.Card) { _ = c.HTML() })
	run("render+json", func(c *card.Card) { _, _ = c.JSON() })
}
