package confusable

import "testing"

// lookupSample is a spread of code points: ASCII listed and not, Latin-1,
// Cyrillic, CJK, unlisted and beyond the table's last entry.
var lookupSample = []rune{'a', 'm', '0', 0xe9, 0x430, 0x455, 0x4f75, 0x2f807, 0x1f600, 0x10fff0}

func BenchmarkLookup(b *testing.B) {
	Lookup('a') // the first call decodes the table; it is measured apart
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		if _, ok := Lookup(lookupSample[i%len(lookupSample)]); ok {
			n++
		}
	}
	_ = n
}

func BenchmarkSkeleton(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Skeleton("p\u0430yp\u0430l.example")
	}
}

// BenchmarkDecode is the one-time cost of the first lookup.
func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
