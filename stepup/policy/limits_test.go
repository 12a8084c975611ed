package policy_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// decide runs one limit through a catalog, as the gate would.
func decide(t *testing.T, l policy.Limit, args string) plug.Decision {
	t.Helper()
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "pay", Class: card.ClassExternal, Unattended: true,
		Limits: []policy.Limit{l}})
	require.NoError(t, err)
	canonical, err := canon.Canonicalize([]byte(args))
	if err != nil {
		return plug.Decision{Verdict: plug.Deny} // the gate refuses it before the policy
	}
	d, err := cat.Decide(context.Background(), plug.Proposal{Tool: "pay", Args: canonical})
	require.NoError(t, err)
	return d
}

// TestMaxAmountIsExact: the limit compares the argument's canonical
// decimal text with the limit's, exactly, whatever the spelling; a number
// canon cannot hash faithfully never reaches the limit (the gate refuses
// it first), and a limit that float64 would round is kept exact.
func TestMaxAmountIsExact(t *testing.T) {
	over := []string{"500.00000000000001", "500.0000000000000000001", "5.0000000000000001e2",
		"50000000000000000001e-17", "501", "1e3", "500.01"}
	under := []string{"500", "500.0", "5e2", "5E2", "0.5e3", "499.99999999999994", "-1e3", "0", "19.99"}
	for _, n := range over {
		assert.Equal(t, plug.Deny, decide(t, policy.MaxAmount("amount", "500"), `{"amount":`+n+`}`).Verdict, n)
	}
	for _, n := range under {
		assert.Equal(t, plug.Allow, decide(t, policy.MaxAmount("amount", "500"), `{"amount":`+n+`}`).Verdict, n)
	}
	assert.Equal(t, plug.Allow, decide(t, policy.MaxAmount("amount", "19.99"), `{"amount":19.99}`).Verdict)
	assert.Equal(t, plug.Deny, decide(t, policy.MaxAmount("amount", "19.99"), `{"amount":19.990000000000001}`).Verdict)
	// Limits themselves are exact decimals: a float64 limit cannot tell
	// these apart, the exact one does.
	assert.Equal(t, plug.Deny, decide(t, policy.MaxAmount("amount", "0.30000000000000000001"), `{"amount":0.3000000000000001}`).Verdict)
	assert.Equal(t, plug.Allow, decide(t, policy.MaxAmount("amount", "0.30000000000000000001"), `{"amount":0.3}`).Verdict)
	assert.Equal(t, 0.30000000000000000001, 0.3, "float64 rounds the limit to the argument")
}

// TestMaxAmountFailsClosed: a limit that is not a decimal, a huge
// exponent, or an argument that is not a number deny.
func TestMaxAmountFailsClosed(t *testing.T) {
	for _, max := range []string{"", "five hundred", "0x1f4", `"500"`, "NaN", "Infinity", "5 00", "+500"} {
		assert.Equal(t, plug.Deny, decide(t, policy.MaxAmount("amount", max), `{"amount":1}`).Verdict, max)
	}
	for _, arg := range []string{`"1"`, `true`, `null`, `[1]`, `{"v":1}`, `1e99999`} {
		d := decide(t, policy.MaxAmount("amount", "500"), `{"amount":`+arg+`}`)
		assert.Equal(t, plug.Deny, d.Verdict, arg)
	}
	assert.Equal(t, plug.Allow, decide(t, policy.MaxAmount("amount", "500"), `{"other":1e3}`).Verdict,
		"a call without the argument is not limited by it")
}

// routing holds the characters that route mail through another host when
// they appear in a local part (percent hack, bang path), quote it, or
// start a comment, a list or a display name.
const routing = "%!\"(),:;<>[\\] \t@"

// TestAllowDomainsRefusesRoutedLocalParts generates addresses at an
// allowlisted domain whose local part carries a routing, quoting or
// list character, in many positions: none is allowed.
func TestAllowDomainsRefusesRoutedLocalParts(t *testing.T) {
	l := policy.AllowDomains("to", "example.com")
	r := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"evil.com", "evil.com.", "10.0.0.1", "[10.0.0.1]", "evil"}
	n := 0
	for _, c := range routing {
		for range 20 {
			local := randomAtom(r)
			pos := r.IntN(len(local) + 1)
			routed := local[:pos] + string(c) + hosts[r.IntN(len(hosts))] + local[pos:]
			to, _ := json.Marshal(routed + "@example.com")
			d := decide(t, l, `{"to":`+string(to)+`}`)
			if !assert.Equal(t, plug.Deny, d.Verdict, routed) {
				return
			}
			n++
		}
	}
	for range 200 {
		local := randomAtom(r)
		to, _ := json.Marshal(local + "@example.com")
		assert.Equal(t, plug.Allow, decide(t, l, `{"to":`+string(to)+`}`).Verdict, local)
	}
	assert.Greater(t, n, 200)
	// The earlier check accepted the percent hack: the class is real.
	assert.True(t, naiveLocalPart("a%evil.com"), "a dot-atom check with %% and ! lets routed mail through")
}

// naiveLocalPart is RFC 5322's atext, which allows the routing characters.
func naiveLocalPart(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0) {
			return false
		}
	}
	return true
}

// randomAtom is a plain dot-atom local part.
func randomAtom(r *rand.Rand) string {
	const atext = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789#$&'*+/=?^_`{|}~-"
	var b strings.Builder
	for i := range 1 + r.IntN(12) {
		if i > 0 && r.IntN(5) == 0 {
			b.WriteByte('.')
		}
		b.WriteByte(atext[r.IntN(len(atext))])
	}
	return b.String()
}

// TestAllowDomainsRefusesMalformedHosts: the domain part must be an ASCII
// host name; look-alikes, IP literals and empty labels are refused.
func TestAllowDomainsRefusesMalformedHosts(t *testing.T) {
	l := policy.AllowDomains("to", "example.com")
	for _, to := range []string{"a@example.com.", "a@.example.com", "a@example..com", "a@-example.com",
		"a@exampl\u0435.com", "a@example.com\u200b", "a@[127.0.0.1]", "a@example.com:25", "a@sub.example.com",
		"a@EXAMPLE.COM\u0000", "a@" + strings.Repeat("x", 64) + ".com"} {
		raw, _ := json.Marshal(to)
		assert.Equal(t, plug.Deny, decide(t, l, `{"to":`+string(raw)+`}`).Verdict, to)
	}
	assert.Equal(t, plug.Deny, decide(t, policy.AllowDomains("to", "exam ple.com"), `{"to":"a@example.com"}`).Verdict,
		"an allowlist entry that is not a host name denies every call")
	assert.Equal(t, plug.Deny, decide(t, policy.AllowDomains("to"), `{"to":"a@example.com"}`).Verdict,
		"an empty allowlist allows nothing")
}
