package receipt_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// slowEffect is the oracle of ScanEffect: decode with encoding/json, then
// require the canonical form of what was decoded to be the input.
func slowEffect(given []byte) (canon.Effect, bool) {
	var e canon.Effect
	if err := json.Unmarshal(given, &e); err != nil {
		return canon.Effect{}, false
	}
	c, err := e.Canonical()
	if err != nil || !bytes.Equal(c, given) {
		return canon.Effect{}, false
	}
	return e, true
}

func effectSeeds(t testing.TB) [][]byte {
	t.Helper()
	full := receipttest.Effect("finance@example.com")
	full.Principal.Delegations = []string{"grant:7", "ops \"night\" \\ shift\n"}
	full.Refs = append(full.Refs, canon.Ref{Name: "https://example.com/x", Kind: "url", Size: -1, Unbound: "content of a url reference is not fetched"})
	full.Args = json.RawMessage(`{"nested":{"a":[1,{"b":"}]\"{"}],"s":"\u0001"},"n":-2.5e-7}`)
	var out [][]byte
	for _, e := range []canon.Effect{receipttest.Effect("a@example.com"), full, {Tool: "t", Args: json.RawMessage(`{}`)}} {
		c, err := e.Canonical()
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

func TestScanEffectAgreesWithOracle(t *testing.T) {
	seeds := effectSeeds(t)
	cases := append([][]byte{}, seeds...)
	base := string(seeds[0])
	for _, mutate := range []func(string) string{
		func(s string) string { return s[:len(s)-1] + `,"x":1}` },
		func(s string) string { return replaceOnce(s, `"refs":[`, `"refs":null,"x":[`) },
		func(s string) string { return replaceOnce(s, `"delegations":[]`, `"delegations":null`) },
		func(s string) string { return replaceOnce(s, `"size":34`, `"size":34.5`) },
		func(s string) string { return replaceOnce(s, `"size":34`, `"size":"34"`) },
		func(s string) string { return replaceOnce(s, `"sha256":"5a5a`, `"sha256":"5A5A`) },
		func(s string) string { return replaceOnce(s, `"sha256":"5a5a`, `"sha256":"5a`) },
		func(s string) string { return replaceOnce(s, `"args":{`, `"args":[{`) },
		func(s string) string { return replaceOnce(s, `"audience":"mailer",`, ``) },
		func(s string) string { return replaceOnce(s, `"tool":"send_email"`, `"tool":7`) },
		func(s string) string { return replaceOnce(s, `"unbound":""`, `"unbound":null`) },
	} {
		m := mutate(base)
		require.NotEqual(t, base, m)
		c, err := canon.Canonicalize([]byte(m))
		if err == nil {
			cases = append(cases, c)
		}
	}
	for i, c := range cases {
		want, wantOK := slowEffect(c)
		got, gotOK := receipt.ScanEffect(c)
		assert.Equalf(t, wantOK, gotOK, "case %d: %s", i, c)
		assert.Equalf(t, want, got, "case %d", i)
	}
	for _, s := range seeds {
		_, ok := receipt.ScanEffect(s)
		assert.True(t, ok, "every canonical effect scans")
	}
}

func replaceOnce(s, old, new string) string { return strings.Replace(s, old, new, 1) }

// FuzzScanEffect checks ScanEffect against the encoding/json oracle on
// every canonical JSON document.
func FuzzScanEffect(f *testing.F) {
	for _, s := range effectSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := canon.Canonicalize(doc)
		if err != nil {
			return
		}
		want, wantOK := slowEffect(c)
		got, gotOK := receipt.ScanEffect(c)
		require.Equal(t, wantOK, gotOK)
		require.Equal(t, want, got)
	})
}
