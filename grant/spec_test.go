package grant_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

func TestValidate(t *testing.T) {
	d := canon.Sum([]byte("a"))
	tmpl := func(rules ...grant.Rule) grant.Grant {
		return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "t", User: "u", Args: rules}}
	}
	many := make([]canon.Digest, grant.MaxPlanSteps+1)
	for i := range many {
		many[i] = canon.Sum([]byte{byte(i), byte(i >> 8)})
	}
	tests := []struct {
		name string
		g    grant.Grant
		ok   bool
	}{
		{"exact", grant.Exact(d), true},
		{"plan", grant.Plan(d, canon.Sum([]byte("b"))), true},
		{"template", refundTemplate(), true},
		{"template without rules", tmpl(), true},
		{"unknown kind", grant.Grant{Kind: "all", Digests: []canon.Digest{d}}, false},
		{"exact with two digests", grant.Grant{Kind: grant.KindExact, Digests: []canon.Digest{d, d}}, false},
		{"exact with zero digest", grant.Exact(canon.Digest{}), false},
		{"exact with a template", grant.Grant{Kind: grant.KindExact, Digests: []canon.Digest{d}, Template: &grant.Template{}}, false},
		{"empty plan", grant.Plan(), false},
		{"plan with a repeated step", grant.Plan(d, d), false},
		{"plan too long", grant.Plan(many...), false},
		{"template with digests", grant.Grant{Kind: grant.KindTemplate, Digests: []canon.Digest{d}, Template: refundTemplate().Template}, false},
		{"template without a template", grant.Grant{Kind: grant.KindTemplate}, false},
		{"template without a tool", grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{User: "u"}}, false},
		{"template without a user", grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "t"}}, false},
		{"template with invalid UTF-8", grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "t\xff", User: "u"}}, false},
		{"rule without a constraint", tmpl(grant.Rule{Path: "/a"}), false},
		{"rule with two constraints", tmpl(grant.Rule{Path: "/a", Equals: []byte(`1`), MaxBytes: 3}), false},
		{"path not a pointer", tmpl(grant.Pin("a", 1)), false},
		{"path with a bad escape", tmpl(grant.Pin("/a~2", 1)), false},
		{"path repeated", tmpl(grant.Pin("/a", 1), grant.Pin("/a", 1)), false},
		{"path inside another rule's", tmpl(grant.Pin("/a", 1), grant.Pin("/a/b", 1)), false},
		{"path inside the whole-arguments rule", tmpl(grant.Pin("", 1), grant.Pin("/b", 1)), false},
		{"siblings sharing a prefix", tmpl(grant.Pin("/a", 1), grant.Pin("/ab", 1)), true},
		{"pin that does not encode", tmpl(grant.Pin("/a", func() {})), false},
		{"pinned value not canonical JSON", tmpl(grant.Rule{Path: "/a", Equals: []byte(`{"x":1,"x":2}`)}), false},
		{"pinned number inexact", tmpl(grant.Rule{Path: "/a", Equals: []byte(`9007199254740993`)}), false},
		{"empty one_of", tmpl(grant.Rule{Path: "/a", OneOf: []json.RawMessage{}}), false},
		{"min only", tmpl(grant.Range("/a", "-1.5", "")), true},
		{"min above max", tmpl(grant.Range("/a", "2", "1")), false},
		{"max not a number", tmpl(grant.Range("/a", "", `"1"`)), false},
		{"max out of range", tmpl(grant.Range("/a", "", "1e400")), false},
		{"domains", tmpl(grant.InDomains("/a", "example.com", "xn--bcher-kva.example")), true},
		{"domains empty", tmpl(grant.InDomains("/a")), false},
		{"domain upper case", tmpl(grant.InDomains("/a", "Example.com")), false},
		{"domain with a trailing dot", tmpl(grant.InDomains("/a", "example.com.")), false},
		{"domain with a wildcard", tmpl(grant.InDomains("/a", "*.example.com")), false},
		{"domain not ASCII", tmpl(grant.InDomains("/a", "exämple.com")), false},
		{"negative max_bytes", tmpl(grant.Text("/a", -1)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.g.Validate()
			_, merr := tt.g.Marshal()
			if tt.ok {
				assert.NoError(t, err)
				assert.NoError(t, merr)
			} else {
				assert.ErrorIs(t, err, grant.ErrInvalidGrant)
				assert.ErrorIs(t, merr, grant.ErrInvalidGrant)
			}
		})
	}
}

func TestMarshalParseRoundTrip(t *testing.T) {
	d := canon.Sum([]byte("a"))
	for _, g := range []grant.Grant{
		grant.Exact(d), grant.Plan(d, canon.Sum([]byte("b"))), refundTemplate(), mailTemplate(),
		oneOf(), nested(), escaped(), noArgs(), wholeArgs(),
		{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "t", User: "u", Agent: "a",
			Args: []grant.Rule{{Path: "/n", Equals: []byte(`null`)}, grant.Range("/x", "1.50", "")}}},
	} {
		spec, err := g.Marshal()
		require.NoError(t, err)
		back, err := grant.Parse(spec)
		require.NoError(t, err, "%s", spec)
		again, err := back.Marshal()
		require.NoError(t, err)
		assert.Equal(t, string(spec), string(again))
	}
}

func TestMarshalIsCanonical(t *testing.T) {
	spec, err := refundTemplate().Marshal()
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"template","template":{"args":[{"equals":"A-17","path":"/order"},`+
		`{"max":120,"min":0,"path":"/amount"},{"equals":"EUR","path":"/currency"}],`+
		`"audience":"payments","tool":"issue_refund","user":"user:dana"}}`, string(spec))
}

func TestParseStrict(t *testing.T) {
	d := canon.Sum([]byte("a")).String()
	tmpl := `{"kind":"template","template":{"tool":"t","audience":"","user":"u","args":[%s]}}`
	tests := []struct {
		name string
		spec string
		ok   bool
	}{
		{"exact", `{"kind":"exact","digests":["` + d + `"]}`, true},
		{"whitespace and key order", ` { "digests" : [ "` + d + `" ] , "kind" : "exact" } `, true},
		{"escaped key", `{"\u006bind":"exact","digests":["` + d + `"]}`, true},
		{"template", strings.Replace(tmpl, "%s", `{"path":"/a","max":120.0}`, 1), true},
		{"not JSON", `{"kind":`, false},
		{"not an object", `["exact"]`, false},
		{"trailing data", `{"kind":"exact","digests":["` + d + `"]} {}`, false},
		{"duplicate key", `{"kind":"exact","kind":"plan","digests":["` + d + `"]}`, false},
		{"unknown field", `{"kind":"exact","digests":["` + d + `"],"scope":"all"}`, false},
		{"field name in another case", `{"KIND":"exact","digests":["` + d + `"]}`, false},
		{"upper-case digest", `{"kind":"exact","digests":["` + strings.ToUpper(d) + `"]}`, false},
		{"short digest", `{"kind":"exact","digests":["abcd"]}`, false},
		{"missing template fields", `{"kind":"template","template":{"tool":"t","user":"u","args":[]}}`, false},
		{"null args", `{"kind":"template","template":{"tool":"t","audience":"","user":"u","args":null}}`, false},
		{"empty agent written out", `{"kind":"template","template":{"tool":"t","audience":"","user":"u","agent":"","args":[]}}`, false},
		{"number as a string", strings.Replace(tmpl, "%s", `{"path":"/a","max":"120"}`, 1), false},
		{"inexact number", strings.Replace(tmpl, "%s", `{"path":"/a","max":0.30000000000000001}`, 1), false},
		{"unknown rule field", strings.Replace(tmpl, "%s", `{"path":"/a","max":1,"regex":".*"}`, 1), false},
		{"zero max_bytes written out", strings.Replace(tmpl, "%s", `{"path":"/a","max":1,"max_bytes":0}`, 1), false},
		{"invalid UTF-8", "{\"kind\":\"template\",\"template\":{\"tool\":\"\xff\",\"audience\":\"\",\"user\":\"u\",\"args\":[]}}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grant.Parse([]byte(tt.spec))
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, grant.ErrInvalidGrant)
			}
		})
	}
}
