package confusable

import (
	"testing"

	"github.com/mtibben/confusables"
)

// TestTableIsSortedAndMatchesSource: entries are in code point order (the
// binary search needs it) and give, for every code point, the skeleton the
// source module computes. Run go generate after updating the module.
func TestTableIsSortedAndMatchesSource(t *testing.T) {
	es := entries()
	for i := 1; i < len(es); i++ {
		if es[i-1].r >= es[i].r {
			t.Fatalf("entries out of order at %d", i)
		}
	}
	step := rune(1)
	if testing.Short() || raceEnabled {
		step = 17
	}
	for r := rune(0); r <= 0x10ffff; r += step {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if got, want := Skeleton(string(r)), confusables.Skeleton(string(r)); got != want {
			t.Fatalf("%U: skeleton %q, source %q", r, got, want)
		}
	}
}

func TestSkeleton(t *testing.T) {
	for _, p := range [][2]string{
		{"paypal", "p\u0430yp\u0430l"},
		{"example", "exarnple"},
		{"scope", "\u0455\u0441\u043e\u0440\u0435"},
	} {
		if Skeleton(p[0]) != Skeleton(p[1]) {
			t.Errorf("%q and %q should be confusable", p[0], p[1])
		}
	}
	if Skeleton("bank") == Skeleton("b\u00e4nk") {
		t.Error("bank and bänk are not confusable")
	}
	if !Listed('\u0430') || Listed('a') || !Listed('m') {
		t.Error("Listed: Cyrillic a is listed, Latin a is not, m is (as rn)")
	}
}
