package host

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nearMisses returns every one-character slip of a registrable name's
// first label: each letter substituted (by every ASCII letter and digit
// and by accented and look-alike forms), deleted, doubled, swapped with
// its neighbour, and every character inserted everywhere; plus small
// capitals and Han and kana strokes put in place of a letter or between
// two.
func nearMisses(name string) []string {
	label, suffix, _ := strings.Cut(name, ".")
	suffix = "." + suffix
	rs := []rune(label)
	subs := []rune("abcdefghijklmnopqrstuvwxyz0123456789-")
	subs = append(subs, []rune("àáâãäåāăąèéêëēėęěìíîïīįıòóôõöøōőùúûüūůűųçćčďđğģķĺļľłńņňñŕřśşšţťŧýÿźżž")...)
	latinLike := []rune("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ丨一丶丿ノーロエニト口工")
	seen := map[string]bool{}
	var out []string
	add := func(l []rune) {
		s := string(l) + suffix
		if s != name && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := range rs {
		for _, c := range append(append([]rune{}, subs...), latinLike...) {
			l := append([]rune{}, rs...)
			l[i] = c
			add(l)
		}
		add(append(append([]rune{}, rs[:i]...), rs[i+1:]...))
		if i+1 < len(rs) {
			l := append([]rune{}, rs...)
			l[i], l[i+1] = l[i+1], l[i]
			add(l)
		}
	}
	for i := 0; i <= len(rs); i++ {
		for _, c := range append(append([]rune{}, subs...), latinLike...) {
			l := append(append(append([]rune{}, rs[:i]...), c), rs[i:]...)
			add(l)
		}
	}
	return out
}

// TestEveryNearMissWarns: every one-character slip of a trusted name, as
// the one host of a value or mentioned, is warned (a near-miss, a
// look-alike, a look-alike label) or refused as no domain name at all;
// none is trusted.
func TestEveryNearMissWarns(t *testing.T) {
	trustedList := []string{"example.com", "paypal.com", "acme-bank.co.uk"}
	trusted, err := PrepareTrusted(trustedList)
	require.NoError(t, err)
	total := 0
	for _, name := range trustedList {
		for _, h := range nearMisses(name) {
			total++
			d, err := analyzeHost(h, true, trusted, &scratch{})
			if err != nil {
				continue // no domain name: the card is refused
			}
			assert.False(t, d.Trusted, h)
			warned := has(d.Warnings, WarnNearMiss) || has(d.Warnings, WarnLookalike) || has(d.Warnings, WarnLookalikeLabel) ||
				has(d.Warnings, WarnMixedScript) || has(d.Warnings, WarnContainsTrusted)
			assert.True(t, warned, "%q (%s) is not warned: %v", h, d.ASCII, d.Warnings)
		}
	}
	assert.Greater(t, total, 6000)
}

// TestNearMissNaiveVariantMissesThem: the skeleton comparison alone (the
// rule before near-misses) lets most slips through unwarned.
func TestNearMissNaiveVariantMissesThem(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	missed := 0
	for _, h := range nearMisses("example.com") {
		d, err := analyzeHost(h, true, trusted, &scratch{})
		if err != nil || !utf8.ValidString(h) {
			continue
		}
		if skeleton(d.Registrable) != trusted[0].skel && !has(d.Warnings, WarnLookalikeLabel) && !has(d.Warnings, WarnMixedScript) {
			missed++
		}
	}
	assert.Greater(t, missed, 500)
}

// TestNearMissIsOneSlip: two slips, or another name altogether, are not
// near-misses; a name that differs only in diacritics is one.
func TestNearMissIsOneSlip(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		near bool
	}{
		{"example.com", "exampie.com", true},
		{"example.com", "exmaple.com", true},
		{"example.com", "exampe.com", true},
		{"example.com", "examplee.com", true},
		{"example.com", "example.co", true},
		{"example.com", "ëxämplė.com", true},
		{"example.com", "exampel.con", false},
		{"example.com", "example.net", false},
		{"example.com", "example.com", false},
		{"paypal.com", "example.com", false},
	} {
		near := nearMiss(skeleton(tc.a), skeleton(tc.b)) || nearMiss(foldName(tc.a), foldName(tc.b))
		assert.Equal(t, tc.near, near, "%s vs %s", tc.a, tc.b)
	}
}
