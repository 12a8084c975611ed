package card_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/cputime"
)

// shapeArgs builds the arguments of one adversarial shape of about size
// bytes of canonical JSON: the shapes that cost the most per byte of
// effect or made the most view per byte.
func shapeArgs(shape string, size int) string {
	var b strings.Builder
	b.WriteString(`{"v":[`)
	item := ""
	switch shape {
	case "nest12", "nest63":
		depth := 12
		if shape == "nest63" {
			depth = canon.DefaultMaxDepth - 3
		}
		item = strings.Repeat(`{"a":`, depth/2) + strings.Repeat(`[`, depth-depth/2) + "1" + strings.Repeat(`]`, depth-depth/2) + strings.Repeat(`}`, depth/2)
	case "empty-lists":
		item = "[]"
	case "empty-objects":
		item = "{}"
	case "short-strings":
		item = `"x"`
	case "numbers":
		item = "1"
	case "keys":
		item = `{"k":{"l":null}}`
	}
	for i := 0; b.Len()+len(item)+3 < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteString(`]}`)
	return b.String()
}

var shapes = []string{"nest12", "nest63", "empty-lists", "empty-objects", "short-strings", "numbers", "keys"}

// BenchmarkRenderShapes renders every adversarial shape at 64 KiB and 1
// MiB in one run, and reports CPU milliseconds per MiB of canonical
// effect for RenderSealed and each view, and the size of each view as a
// multiple of the effect ("html-x", "text-x", "json-x" for the card
// JSON); "floor-card-sha256" is SHA-256 of the card JSON alone, which any
// renderer's card of the effect must hash; "render" is RenderSealed
// alone, what the gate calls before any view; "text" and "html" are each
// view alone, of a card rendered before the clock starts; "render+views"
// is all three. The baseline, in the same run, is canon's
// canonicalization of the same effect. Every step renders about a MiB of
// effect per iteration at either size.
//
//	go test ./card -run '^$' -bench BenchmarkRenderShapes -benchtime 3x
func BenchmarkRenderShapes(b *testing.B) {
	for _, shape := range shapes {
		for _, size := range []int{64 << 10, canon.DefaultMaxBytes - 64<<10} {
			name := shape + "/64KiB"
			if size > 64<<10 {
				name = shape + "/1MiB"
			}
			e := effectWith(shapeArgs(shape, size))
			sealed, err := canon.Seal(e)
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			// Each step does about a MiB of effect per iteration at either
			// size (16 renders of the 64 KiB effect), so the two sizes are
			// measured over the same work and the small one is not a few
			// milliseconds that one collection of garbage can double.
			reps := max(1, (1<<20)/size)
			mib := float64(reps) * float64(sealed.Len()) / (1 << 20)
			ctx := injectivityContext()
			b.Run(name+"/baseline-canonical", func(b *testing.B) {
				cpu := cputime.Process()
				for b.Loop() {
					for range reps {
						if _, err := e.Canonical(); err != nil {
							b.Fatal(err)
						}
					}
				}
				report(b, cputime.Process()-cpu, mib)
			})
			// The floor every card of this effect pays: SHA-256 of its
			// card JSON, which the card hash covers, whatever the renderer.
			b.Run(name+"/floor-card-sha256", func(b *testing.B) {
				c, err := card.RenderSealed(sealed, ctx)
				if err != nil {
					b.Skipf("refused: %v", err)
				}
				j, err := c.JSON()
				if err != nil {
					b.Fatal(err)
				}
				cpu := cputime.Process()
				for b.Loop() {
					for range reps {
						_ = sha256.Sum256(j)
					}
				}
				report(b, cputime.Process()-cpu, mib)
				b.ReportMetric(float64(len(j))/float64(sealed.Len()), "json-x")
			})
			b.Run(name+"/render", func(b *testing.B) {
				cpu := cputime.Process()
				for b.Loop() {
					for range reps {
						if _, err := card.RenderSealed(sealed, ctx); err != nil {
							b.Skipf("refused: %v", err)
						}
					}
				}
				report(b, cputime.Process()-cpu, mib)
			})
			for _, view := range []string{"text", "html"} {
				b.Run(name+"/"+view, func(b *testing.B) {
					c, err := card.RenderSealed(sealed, ctx)
					if err != nil {
						b.Skipf("refused: %v", err)
					}
					cpu := cputime.Process()
					for b.Loop() {
						for range reps {
							if view == "text" {
								_ = c.Text()
							} else {
								_ = c.HTML()
							}
						}
					}
					report(b, cputime.Process()-cpu, mib)
				})
			}
			b.Run(name+"/render+views", func(b *testing.B) {
				cpu := cputime.Process()
				var htmlLen, textLen int
				for b.Loop() {
					for range reps {
						c, err := card.RenderSealed(sealed, ctx)
						if err != nil {
							b.Skipf("refused: %v", err)
						}
						htmlLen, textLen = len(c.HTML()), len(c.Text())
					}
				}
				report(b, cputime.Process()-cpu, mib)
				b.ReportMetric(float64(htmlLen)/float64(sealed.Len()), "html-x")
				b.ReportMetric(float64(textLen)/float64(sealed.Len()), "text-x")
			})
		}
	}
}
