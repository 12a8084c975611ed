package host

import (
	"fmt"
	"testing"
)

// hostsFor returns n distinct host names of one shape.
func hostsFor(n int, shape string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(shape, i)
	}
	return out
}

// BenchmarkAnalyze measures the analysis of distinct hosts, each once, and
// of its parts: the cost the card pays per distinct host it names.
//
//	go test ./card/internal/host -run '^$' -bench BenchmarkAnalyze
func BenchmarkAnalyze(b *testing.B) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, shape string }{
		{"ascii", "h%d.com"},
		{"latin", "\u00fc%d.de"},
		{"mixed", "ex\u0430mple%d.com"},
	} {
		hosts := hostsFor(4096, c.shape)
		b.Run(c.name+"/analyze", func(b *testing.B) {
			var sc scratch
			for i := 0; b.Loop(); i++ {
				if _, err := analyzeHost(hosts[i%len(hosts)], false, trusted, &sc); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, v := range []struct{ name, shape string }{{"address", "x@%s"}, {"mention", "@%s"}} {
			values := make([]string, len(hosts))
			for i, h := range hosts {
				values[i] = fmt.Sprintf(v.shape, h)
			}
			b.Run(c.name+"/hosts-"+v.name, func(b *testing.B) {
				a := NewAnalyzer(trusted)
				for i := 0; b.Loop(); i++ {
					if i%len(values) == 0 {
						a = NewAnalyzer(trusted)
					}
					if _, _, err := a.Hosts(values[i%len(values)], false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(c.name+"/skeleton", func(b *testing.B) {
			var sc scratch
			for i := 0; b.Loop(); i++ {
				sc.skel = appendSkeleton(sc.skel[:0], hosts[i%len(hosts)], &sc)
			}
		})
		b.Run(c.name+"/fastIDNA", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				fastIDNA(hosts[i%len(hosts)])
			}
		})
		b.Run(c.name+"/registrable", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				registrable(hosts[i%len(hosts)])
			}
		})
		b.Run(c.name+"/show", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				display.Show(hosts[i%len(hosts)])
			}
		})
	}
}
