package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// TestAllowDomainsReadsOneAddress: an allowlisted domain after the last
// "@" does not make a string an address at that domain. A list in one
// string, a display name or a second "@" would carry a recipient outside
// the allowlist past the limit, and with an unattended tool straight to
// execution without anyone being asked.
func TestAllowDomainsReadsOneAddress(t *testing.T) {
	cat, err := policy.NewCatalog("v1",
		policy.Tool{Name: "notify", Class: card.ClassExternal, Unattended: true,
			Limits: []policy.Limit{policy.AllowDomains("to", "example.com")}})
	require.NoError(t, err)
	tests := []struct {
		name string
		to   string
		want plug.Verdict
	}{
		{"address at the domain", `"ops@example.com"`, plug.Allow},
		{"domain in upper case", `"ops@EXAMPLE.com"`, plug.Allow},
		{"list of addresses at the domain", `["a@example.com","b@example.com"]`, plug.Allow},
		{"comma list ending at the domain", `"mallory@evil.com,ops@example.com"`, plug.Deny},
		{"space list ending at the domain", `"mallory@evil.com ops@example.com"`, plug.Deny},
		{"semicolon list ending at the domain", `"mallory@evil.com;ops@example.com"`, plug.Deny},
		{"display name hiding the address", `"Ops <mallory@evil.com>@example.com"`, plug.Deny},
		{"line break before the domain", `"mallory@evil.com\n@example.com"`, plug.Deny},
		{"two at signs", `"mallory@evil.com@example.com"`, plug.Deny},
		{"no local part", `"@example.com"`, plug.Deny},
		{"trailing dot", `"ops@example.com."`, plug.Deny},
		{"one bad address in a list", `["a@example.com","m@evil.com,b@example.com"]`, plug.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := cat.Decide(context.Background(), plug.Proposal{Tool: "notify",
				Args: json.RawMessage(`{"to":` + tt.to + `}`)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Verdict, d.Reason)
		})
	}
}
