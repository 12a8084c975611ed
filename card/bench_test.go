package card_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/cputime"
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

// worstCaseArgs builds argument objects of about size bytes of canonical
// JSON that make the renderer work hardest per byte: letters of rare
// scripts and look-alikes (script and confusables lookups for each), marks,
// invisible characters and space runs (escapes), host names (IDNA and the
// public suffix list), many keys, the deepest nesting canon allows, many
// distinct non-ASCII hosts per value, and text of URL schemes back to back.
func worstCaseArgs(size int) map[string]string {
	exotic := []rune("\u2d30\u2d31\u13aa\U000104b0\ua4d0\u0430\u0251\u0131\uab32\u0301\u200b\u2800\u00a0\u1112\u1161\U0001d41a\uff54")
	var text strings.Builder
	for i := 0; text.Len() < size; i++ {
		text.WriteRune(exotic[i%len(exotic)])
		if i%11 == 0 {
			text.WriteString("  x@ex\u0430mple.com ")
		}
	}
	// Many keys: each a short mixed-script word, each value an address.
	var keys strings.Builder
	keys.WriteByte('{')
	for i := 0; keys.Len() < size-64; i++ {
		if i > 0 {
			keys.WriteByte(',')
		}
		fmt.Fprintf(&keys, `"p\u0430y%d":"a@b%d.example.com"`, i, i%97)
	}
	keys.WriteByte('}')
	// Deepest nesting, a long list of look-alike strings at the bottom.
	var deep strings.Builder
	depth := canon.DefaultMaxDepth - 3
	deep.WriteString(strings.Repeat(`{"\u0430":[`, depth/2))
	for i := 0; deep.Len() < size-4*depth; i++ {
		if i > 0 {
			deep.WriteByte(',')
		}
		deep.WriteString(`"\u13aa\u2d30 x"`)
	}
	deep.WriteString(strings.Repeat(`]}`, depth/2))
	// Many distinct hosts: each one analysed (IDNA, public suffix list).
	var hosts strings.Builder
	hosts.WriteByte('{')
	for i := 0; hosts.Len() < size-64; i++ {
		if i > 0 {
			hosts.WriteByte(',')
		}
		fmt.Fprintf(&hosts, `"%d":"x@h%d.com"`, i, i)
	}
	hosts.WriteByte('}')
	// Many hosts per value, each distinct and non-ASCII (so each takes
	// the full IDNA conversion), eight per value and one more, which the
	// card says it does not analyse.
	var idna strings.Builder
	idna.WriteByte('[')
	for i := 0; idna.Len() < size-256; i++ {
		if i > 0 {
			idna.WriteByte(',')
		}
		idna.WriteByte('"')
		for k, l := range []string{"\u00fc", "\u00f6", "\u00e4", "\u00e9", "\u00f1", "\u00e7", "\u00f8", "\u00e5", "\u00df"} {
			if k > 0 {
				idna.WriteByte(' ')
			}
			fmt.Fprintf(&idna, "@%s%d.de", l, i)
		}
		idna.WriteByte('"')
	}
	idna.WriteByte(']')
	// URL schemes back to back with no space: each colon starts a URL
	// that runs to the end of the text ("a://a://a://...").
	schemes := `"` + strings.Repeat("a://", (size-64)/4) + `"`
	return map[string]string{"exotic": text.String(), "keys": keys.String(), "deep": deep.String(), "hosts": hosts.String(),
		"idna": idna.String(), "schemes": schemes}
}

// BenchmarkRenderWorstCase renders effects of close to canon's 1 MiB limit
// built to be as slow as possible per byte, with each view, and reports
// milliseconds per MiB of canonical effect, of wall time (ms/MiB) and of
// the process's CPU time (cpu-ms/MiB, which other load on a shared machine
// does not inflate; it includes the garbage collector's work). The
// baseline, in the same run, is canon's own canonicalization of the same
// effect. "render" is [card.RenderSealed] of the sealed effect, what the
// gate hands the renderer; "render-effect" is [card.Render] of the effect
// as written, which seals it first (canonicalization included). "text"
// and "html" build the view alone, of a card rendered before the timer.
//
//	go test ./card -run '^$' -bench BenchmarkRenderWorstCase -benchtime 5x
func BenchmarkRenderWorstCase(b *testing.B) {
	const size = canon.DefaultMaxBytes - 64<<10
	for name, raw := range worstCaseArgs(size) {
		var args json.RawMessage
		if name == "exotic" {
			args, _ = json.Marshal(map[string]string{"body": raw})
		} else {
			args = json.RawMessage(`{"v":` + raw + `}`)
		}
		e := effectWith(string(args))
		sealed, err := canon.Seal(e)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		mib := float64(sealed.Len()) / (1 << 20)
		ctx := injectivityContext()
		b.Run(name+"/baseline-canonical", func(b *testing.B) {
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := e.Canonical(); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cputime.Process()-cpu, mib)
		})
		for _, view := range []string{"text", "html"} {
			b.Run(name+"/"+view, func(b *testing.B) {
				c, err := card.RenderSealed(sealed, ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				cpu := cputime.Process()
				for b.Loop() {
					if view == "text" {
						_ = c.Text()
					} else {
						_ = c.HTML()
					}
				}
				report(b, cputime.Process()-cpu, mib)
			})
		}
		for _, view := range []string{"render", "render+text", "render+html", "render-effect"} {
			b.Run(name+"/"+view, func(b *testing.B) {
				cpu := cputime.Process()
				for b.Loop() {
					var c *card.Card
					var err error
					if view == "render-effect" {
						c, err = card.Render(e, ctx)
					} else {
						c, err = card.RenderSealed(sealed, ctx)
					}
					if err != nil {
						b.Fatal(err)
					}
					switch view {
					case "render+text":
						_ = c.Text()
					case "render+html":
						_ = c.HTML()
					}
				}
				report(b, cputime.Process()-cpu, mib)
			})
		}
	}
}

func report(b *testing.B, cpu time.Duration, mib float64) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/mib, "ms/MiB")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N)/mib, "cpu-ms/MiB")
	}
}
