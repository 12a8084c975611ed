package run

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/publicsuffix"

	"github.com/agentstepup/asu/audit"
)

// TestPracticeArgsChangesExactlyOneValue: for many spellings of an
// address and an amount, the copy differs from the original in one
// value only, of the class named; arguments with neither are not copied.
func TestPracticeArgsChangesExactlyOneValue(t *testing.T) {
	for _, tc := range []struct {
		args, class, want string
	}{
		{`{"to":"a@example.com"}`, audit.PracticeLookalikeDomain, `{"to":"a@exarnple.com"}`},
		{`{"to":"a@mail.acme-corp.co.uk"}`, audit.PracticeLookalikeDomain, `{"to":"a@mail.acrne-corp.co.uk"}`},
		{`{"to":"a@example.co.uk."}`, audit.PracticeLookalikeDomain, `{"to":"a@exarnple.co.uk."}`},
		{`{"to":"a@shop.github.io"}`, audit.PracticeLookalikeDomain, `{"to":"a@sh0p.github.io"}`},
		{`{"to":"x@lab.io"}`, audit.PracticeLookalikeDomain, `{"to":"x@1ab.io"}`},
		{`{"to":"x@b.io"}`, audit.PracticeLookalikeDomain, `{"to":"x@bb.io"}`},
		{`{"cc":["p@q.org","r@s.org"],"to":"a@zz.net"}`, audit.PracticeLookalikeDomain, `{"cc":["p@qq.org","r@s.org"],"to":"a@zz.net"}`},
		{`{"amount":7,"order":"A-1"}`, audit.PracticeAmountTenfold, `{"amount":70,"order":"A-1"}`},
		{`{"amount":0.01}`, audit.PracticeAmountTenfold, `{"amount":0.1}`},
		{`{"amount":3.25}`, audit.PracticeAmountTenfold, `{"amount":32.5}`},
		{`{"n":{"deep":[1,2]}}`, audit.PracticeAmountTenfold, `{"n":{"deep":[10,2]}}`},
		{`{"to":"a@example.com","amount":5}`, audit.PracticeLookalikeDomain, `{"amount":5,"to":"a@exarnple.com"}`},
		{`{"title":"no address","n":-3}`, "", ""},
		{`{}`, "", ""},
		{`{"to":"@"}`, "", ""},
	} {
		got, class, ok := practiceArgs(json.RawMessage(tc.args))
		if tc.class == "" {
			assert.False(t, ok, tc.args)
			continue
		}
		require.True(t, ok, tc.args)
		assert.Equal(t, tc.class, class, tc.args)
		assert.JSONEq(t, tc.want, string(got), tc.args)
	}
}

// TestPracticeArgsIsBounded: arguments nested past the bound are walked
// no deeper, and never panic.
func TestPracticeArgsIsBounded(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + `"x@example.com"` + strings.Repeat(`}`, 200)
	_, _, ok := practiceArgs(json.RawMessage(deep))
	assert.False(t, ok)
	for i := 1; i <= 40; i++ {
		args := fmt.Sprintf(`{"amount":%d.%d}`, i, i)
		_, _, ok := practiceArgs(json.RawMessage(args))
		assert.True(t, ok, args)
	}
}

// FuzzPracticeArgs: whatever the arguments, practiceArgs never panics,
// and a copy it makes is valid JSON that differs from them.
func FuzzPracticeArgs(f *testing.F) {
	for _, s := range []string{`{"to":"a@example.com"}`, `{"amount":1.5}`, `[]`, `{"a":[{"b":"c@d"}]}`, `1e400`, `{"x":1e-7}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<12 {
			return
		}
		got, _, ok := practiceArgs(json.RawMessage(s))
		if !ok {
			return
		}
		require.True(t, json.Valid(got), "%q -> %q", s, got)
		assert.NotEqual(t, s, string(got), "%q", s)
	})
}

// TestPracticeLookalikeKeepsThePublicSuffix: over generated addresses
// under one-, two- and three-label public suffixes, with subdomains, a
// root dot and capitals, the practice copy's recipient has the same
// public suffix and another registrable domain, one label changed: the
// look-alike a person must catch is of the name they read, never of the
// suffix (a naive "label before the last" would change co in
// acme.co.uk and leave acme untouched).
func TestPracticeLookalikeKeepsThePublicSuffix(t *testing.T) {
	suffixes := []string{"com", "org", "io", "co.uk", "com.au", "ac.jp", "github.io", "co.nz", "gov.uk", "appspot.com"}
	names := []string{"acme", "example", "lab", "b", "northwind-traders", "bank", "mail"}
	subs := []string{"", "mail.", "eu.mail.", "x."}
	for _, suffix := range suffixes {
		for _, name := range names {
			for _, sub := range subs {
				for _, dot := range []string{"", "."} {
					host := sub + name + "." + suffix + dot
					addr := "finance@" + host
					got, ok := lookalikeAddress(addr)
					require.True(t, ok, addr)
					newHost := strings.TrimSuffix(got[strings.LastIndexByte(got, '@')+1:], ".")
					oldHost := strings.TrimSuffix(host, ".")
					oldSuffix, _ := publicsuffix.PublicSuffix(oldHost)
					newSuffix, _ := publicsuffix.PublicSuffix(newHost)
					assert.Equal(t, oldSuffix, newSuffix, "%s -> %s keeps its public suffix", addr, got)
					oldReg, err := publicsuffix.EffectiveTLDPlusOne(oldHost)
					require.NoError(t, err)
					newReg, err := publicsuffix.EffectiveTLDPlusOne(newHost)
					require.NoError(t, err, got)
					assert.NotEqual(t, oldReg, newReg, "%s -> %s changes the registrable domain", addr, got)
					assert.Equal(t, strings.Count(oldReg, "."), strings.Count(newReg, "."), got)
					assert.Equal(t, strings.TrimSuffix(oldHost, oldReg), strings.TrimSuffix(newHost, newReg), "%s -> %s: only the registrable label", addr, got)
					assert.Equal(t, strings.HasSuffix(host, "."), strings.HasSuffix(got, "."), "the root dot is kept")
				}
			}
		}
	}
}
