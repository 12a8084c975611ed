package card_test

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

var (
	viewTag         = regexp.MustCompile(`<[^>]*>`)
	viewList        = regexp.MustCompile(`<ul[^>]*>`)
	viewSpace       = regexp.MustCompile(`\s+`)
	viewFingerprint = regexp.MustCompile(`fingerprint [0-9a-f]+`)
)

// seen is what a reader takes from a view, as loosely as a hurried
// person reads it: the HTML's text (list nesting kept as brackets, tags
// dropped, entities decoded, white space collapsed as a browser does
// outside preformatted text, the fingerprint dropped), then invisible
// characters removed and compatibility forms and a few look-alikes
// folded.
func seen(view string, isHTML bool) string {
	if isHTML {
		view = viewList.ReplaceAllString(view, " ⟦ ")
		view = strings.ReplaceAll(view, "</ul>", " ⟧ ")
		view = viewTag.ReplaceAllString(view, " ")
		view = html.UnescapeString(view)
		view = viewFingerprint.ReplaceAllString(view, "")
		view = strings.TrimSpace(viewSpace.ReplaceAllString(view, " "))
	}
	view = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || r == '\u00ad' {
			return -1
		}
		switch r {
		case '\u0430':
			return 'a'
		case '\u0435':
			return 'e'
		case '\u043e':
			return 'o'
		case '\u2014', '\u2015', '\u2012', '\u2013':
			return '-'
		case '\u00a0', '\u2007', '\u202f':
			return ' '
		}
		return r
	}, norm.NFKC.String(view))
	return view
}

// viewAtoms are values and keys that differ from one another by type,
// quoting, escapes, white space, invisible characters, normalization and
// look-alikes.
var viewAtoms = []any{"", " ", "a", "a ", " a", "a b", "a  b", "1", "true", "null", "[]", "{}", `"`, `\`, "a\nb",
	`a\nb`, "a, b", "a: b", "[0]", "x = 1", "…", "...", "\t", "a\u00a0b", "a\u200bb", "a\u202eb", "\u00e9", "e\u0301",
	"\ufb01", "fi", "\uff21", "A", "\u0430", "\u2014", "-", "'a'", `"a"`, `a"`, "a.b", "<b>", "&amp;", "&", "\u5de5",
	"\u30a8", "\u65e5\u672c", 1, -1, 0, 1.5, 100, 1e21, true, false, nil}

var viewKeys = []string{"a", "b", "a.b", "a b", "", " ", "1", "[0]", "a:", `"a"`, `a"`, "a,", "-", "&amp;", "<i>",
	"\u0430", "a\u200b"}

func viewValue(r *rand.Rand, depth int) any {
	if depth > 1 || r.IntN(3) > 0 {
		return viewAtoms[r.IntN(len(viewAtoms))]
	}
	if r.IntN(2) == 0 {
		arr := []any{}
		for range r.IntN(3) {
			arr = append(arr, viewValue(r, depth+1))
		}
		return arr
	}
	obj := map[string]any{}
	for range r.IntN(3) {
		obj[viewKeys[r.IntN(len(viewKeys))]] = viewValue(r, depth+1)
	}
	return obj
}

// viewCorpus returns generated argument objects with distinct digests.
func viewCorpus(t *testing.T, n int) [][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"subject", "to", "a", "a.b", "x"}
	digests := map[canon.Digest]bool{}
	var out [][]byte
	for range n {
		args := map[string]any{}
		for range 1 + r.IntN(2) {
			args[names[r.IntN(len(names))]] = viewValue(r, 0)
		}
		b, err := json.Marshal(args)
		require.NoError(t, err)
		s, err := canon.Seal(effectWith(string(b)))
		if err != nil || digests[s.Digest()] {
			continue
		}
		digests[s.Digest()] = true
		out = append(out, b)
	}
	return out
}

// TestViewsStayDistinctToAHurriedReader: generated effects with different
// digests never read the same, in the text view or the HTML view, even
// after invisible characters are removed, white space collapsed and
// compatibility forms and look-alikes folded.
func TestViewsStayDistinctToAHurriedReader(t *testing.T) {
	ctx := injectivityContext()
	n, least := 12000, 4000
	if raceEnabled || testing.Short() {
		n, least = 1500, 500 // a sample: the race detector slows rendering tenfold
	}
	corpus := viewCorpus(t, n)
	require.Greater(t, len(corpus), least)
	text, page := map[string]string{}, map[string]string{}
	for _, b := range corpus {
		c, err := card.Render(effectWith(string(b)), ctx)
		if err != nil {
			continue // no card, no approval
		}
		for _, v := range []struct {
			name string
			seen map[string]string
			key  string
		}{{"text", text, seen(c.Visible(), false)}, {"html", page, seen(string(c.HTML()), true)}} {
			if prev, ok := v.seen[v.key]; ok {
				t.Errorf("%s view reads the same for %s and %s", v.name, prev, b)
			}
			v.seen[v.key] = string(b)
		}
	}
	assert.Greater(t, len(text), least)
}

// TestHurriedReaderCatchesNaive: the same reading of a naive view (each
// argument's value printed with %v) confuses many of the corpus's effects,
// so the test above could fail.
func TestHurriedReaderCatchesNaive(t *testing.T) {
	corpus := viewCorpus(t, 3000)
	naive := map[string]bool{}
	collisions := 0
	for _, b := range corpus {
		var args map[string]any
		require.NoError(t, json.Unmarshal(b, &args))
		key := seen(fmt.Sprintf("%v", args), false)
		if naive[key] {
			collisions++
		}
		naive[key] = true
	}
	assert.Greater(t, collisions, 50)
}
