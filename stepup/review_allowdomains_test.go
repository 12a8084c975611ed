package stepup_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
)

// TestAllowDomainsReadsOneAddress: an allowlisted domain after the last
// "@" does not make a string an address at that domain. A list in one
// string, a display name or a second "@" would carry a recipient outside
// the allowlist past the limit, and with an unattended tool straight to
// execution without anyone being asked.
func TestAllowDomainsReadsOneAddress(t *testing.T) {
	cat, err := stepup.NewCatalog("v1",
		stepup.Tool{Name: "notify", Class: card.ClassExternal, Unattended: true,
			Limits: []stepup.Limit{stepup.AllowDomains("to", "example.com")}})
	require.NoError(t, err)
	tests := []struct {
		name string
		to   string
		want stepup.Verdict
	}{
		{"address at the domain", `"ops@example.com"`, stepup.Allow},
		{"domain in upper case", `"ops@EXAMPLE.com"`, stepup.Allow},
		{"list of addresses at the domain", `["a@example.com","b@example.com"]`, stepup.Allow},
		{"comma list ending at the domain", `"mallory@evil.com,ops@example.com"`, stepup.Deny},
		{"space list ending at the domain", `"mallory@evil.com ops@example.com"`, stepup.Deny},
		{"semicolon list ending at the domain", `"mallory@evil.com;ops@example.com"`, stepup.Deny},
		{"display name hiding the address", `"Ops <mallory@evil.com>@example.com"`, stepup.Deny},
		{"line break before the domain", `"mallory@evil.com\n@example.com"`, stepup.Deny},
		{"two at signs", `"mallory@evil.com@example.com"`, stepup.Deny},
		{"no local part", `"@example.com"`, stepup.Deny},
		{"trailing dot", `"ops@example.com."`, stepup.Deny},
		{"one bad address in a list", `["a@example.com","m@evil.com,b@example.com"]`, stepup.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := cat.Decide(context.Background(), stepup.Proposal{Tool: "notify",
				Args: json.RawMessage(`{"to":` + tt.to + `}`)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Verdict, d.Reason)
		})
	}
}
