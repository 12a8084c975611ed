package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// TestCatalogIsImmutable builds a catalog, then edits every map and slice
// of the Tool it was built from, and of the Decision it returned: no
// later decision changes. Before, the catalog kept the caller's maps and
// slices, so deleting a Refs entry unbound an attachment, editing Trusted
// stopped the look-alike warning and swapping a Limit lifted a limit, all
// under the same policy version.
func TestCatalogIsImmutable(t *testing.T) {
	mutations := []struct {
		name string
		edit func(*policy.Tool)
	}{
		{"delete a reference", func(tl *policy.Tool) { delete(tl.Refs, "attachment") }},
		{"rebind a reference", func(tl *policy.Tool) { tl.Refs["attachment"] = "url" }},
		{"edit a trusted domain", func(tl *policy.Tool) { tl.Trusted[0] = "evil.net" }},
		{"swap a limit", func(tl *policy.Tool) { tl.Limits[0] = func(canon.Value) string { return "" } }},
		{"edit a hint label", func(tl *policy.Tool) { tl.Hints.Labels["to"] = "cc" }},
		{"reorder hints", func(tl *policy.Tool) { tl.Hints.Order[0] = "subject" }},
		{"edit the schema", func(tl *policy.Tool) { copy(tl.Schema, `{"type":"string"       }`) }},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			tool := policy.Tool{Name: "send", Class: card.ClassExternal,
				Schema:  json.RawMessage(`{"type":"object","required":["to"]}`),
				Limits:  []policy.Limit{policy.AllowDomains("to", "example.com")},
				Refs:    map[string]string{"attachment": "file"},
				Trusted: []string{"example.com"},
				Hints:   card.Hints{Labels: map[string]string{"to": "to"}, Order: []string{"to", "subject"}}}
			cat, err := policy.NewCatalog("v1", tool)
			require.NoError(t, err)
			p := plug.Proposal{Tool: "send", Args: json.RawMessage(`{"attachment":"q3.csv","to":"a@example.com"}`)}
			before, err := cat.Decide(context.Background(), p)
			require.NoError(t, err)
			bad := plug.Proposal{Tool: "send", Args: json.RawMessage(`{"to":"a@evil.net"}`)}
			badBefore, err := cat.Decide(context.Background(), bad)
			require.NoError(t, err)

			m.edit(&tool)
			before.Trusted = append(before.Trusted[:0], "evil.net") // the decision is the gate's copy
			before.Hints.Order = append(before.Hints.Order[:0], "x")

			after, err := cat.Decide(context.Background(), p)
			require.NoError(t, err)
			assert.Equal(t, []string{"example.com"}, after.Trusted)
			assert.Equal(t, []string{"to", "subject"}, after.Hints.Order)
			assert.Equal(t, "to", after.Hints.Labels["to"])
			require.Len(t, after.Refs, 1)
			assert.Equal(t, "file", after.Refs[0].Kind)
			badAfter, err := cat.Decide(context.Background(), bad)
			require.NoError(t, err)
			assert.Equal(t, badBefore, badAfter)
			assert.Equal(t, plug.Deny, badAfter.Verdict)
		})
	}
}

// TestCatalogRefusesPublicSuffixesAsTrusted: a public suffix, or an IP
// address, listed as trusted would make every name under it wear the
// TRUSTED badge; the catalog refuses it at configuration.
func TestCatalogRefusesPublicSuffixesAsTrusted(t *testing.T) {
	for _, d := range []string{"com", "github.io", "co.uk", "127.0.0.1"} {
		_, err := policy.NewCatalog("v1", policy.Tool{Name: "send", Class: card.ClassExternal, Trusted: []string{d}})
		assert.ErrorIs(t, err, stepup.ErrConfig, d)
	}
	_, err := policy.NewCatalog("v1", policy.Tool{Name: "send", Class: card.ClassExternal, Trusted: []string{"example.github.io"}})
	assert.NoError(t, err)
}
