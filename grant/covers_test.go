package grant_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

func TestCoversTemplate(t *testing.T) {
	const order = `"order":"A-17","currency":"EUR"`
	withTemplate := func(g grant.Grant, f func(*grant.Template)) grant.Grant {
		t := *g.Template
		t.Args = append([]grant.Rule(nil), t.Args...)
		f(&t)
		g.Template = &t
		return g
	}
	tests := []struct {
		name   string
		g      grant.Grant
		e      canon.Effect
		reason grant.Reason // empty: covered
		path   string
	}{
		{name: "the approved refund", g: refundTemplate(), e: refund(`{` + order + `,"amount":120}`)},
		{name: "keys in another order", g: refundTemplate(), e: refund(`{"currency":"EUR","amount":99.5,"order":"A-17"}`)},
		{name: "same decimal spelled differently", g: refundTemplate(), e: refund(`{` + order + `,"amount":1.2e2}`)},
		{name: "120.0 is 120", g: refundTemplate(), e: refund(`{` + order + `,"amount":120.0}`)},
		{name: "lower bound inclusive", g: refundTemplate(), e: refund(`{` + order + `,"amount":0}`)},

		// The reference program, "Try it" 2: approved for 120, the agent asks for 1,200.
		{name: "1200 against 120", g: refundTemplate(), e: refund(`{` + order + `,"amount":1200}`),
			reason: grant.ReasonBounds, path: "/amount"},
		{name: "a cent over", g: refundTemplate(), e: refund(`{` + order + `,"amount":120.01}`),
			reason: grant.ReasonBounds, path: "/amount"},
		{name: "a hair over", g: refundTemplate(), e: refund(`{` + order + `,"amount":120.00000000001}`),
			reason: grant.ReasonBounds, path: "/amount"},
		{name: "negative", g: refundTemplate(), e: refund(`{` + order + `,"amount":-5}`),
			reason: grant.ReasonBounds, path: "/amount"},
		{name: "amount as text", g: refundTemplate(), e: refund(`{` + order + `,"amount":"120"}`),
			reason: grant.ReasonType, path: "/amount"},
		{name: "another order", g: refundTemplate(), e: refund(`{"order":"A-18","currency":"EUR","amount":10}`),
			reason: grant.ReasonValue, path: "/order"},
		{name: "order differs by case", g: refundTemplate(), e: refund(`{"order":"a-17","currency":"EUR","amount":10}`),
			reason: grant.ReasonValue, path: "/order"},
		{name: "an unpinned extra argument", g: refundTemplate(), e: refund(`{` + order + `,"amount":10,"to_account":"X-9"}`),
			reason: grant.ReasonUnpinned, path: "/to_account"},
		{name: "an extra argument, even empty", g: refundTemplate(), e: refund(`{` + order + `,"amount":10,"opts":{}}`),
			reason: grant.ReasonUnpinned, path: "/opts"},
		{name: "an extra null", g: refundTemplate(), e: refund(`{` + order + `,"amount":10,"note":null}`),
			reason: grant.ReasonUnpinned, path: "/note"},
		{name: "a pinned argument missing", g: refundTemplate(), e: refund(`{"order":"A-17","amount":10}`),
			reason: grant.ReasonMissing, path: "/currency"},
		{name: "another tool", g: refundTemplate(), e: effect("issue_credit", `{`+order+`,"amount":10}`),
			reason: grant.ReasonTool},
		{name: "another audience", g: refundTemplate(),
			e:      with(refund(`{`+order+`,"amount":10}`), func(e *canon.Effect) { e.Audience = "payments-eu" }),
			reason: grant.ReasonAudience},
		{name: "a grant for user A used for user B", g: refundTemplate(),
			e:      with(refund(`{`+order+`,"amount":10}`), func(e *canon.Effect) { e.Principal.User = "user:eve" }),
			reason: grant.ReasonUser},
		{name: "pinned agent", g: withTemplate(refundTemplate(), func(t *grant.Template) { t.Agent = "agent:support" }),
			e: refund(`{` + order + `,"amount":10}`)},
		{name: "another agent", g: withTemplate(refundTemplate(), func(t *grant.Template) { t.Agent = "agent:billing" }),
			e: refund(`{` + order + `,"amount":10}`), reason: grant.ReasonAgent},
		{name: "through a delegation", g: refundTemplate(),
			e:      with(refund(`{`+order+`,"amount":10}`), func(e *canon.Effect) { e.Principal.Delegations = []string{"agent:x"} }),
			reason: grant.ReasonDelegated},
		{name: "with a reference", g: refundTemplate(),
			e: with(refund(`{`+order+`,"amount":10}`), func(e *canon.Effect) {
				e.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Size: 3, SHA256: canon.Sum([]byte("abc"))}}
			}),
			reason: grant.ReasonReferences},

		{name: "mail to an allowed domain", g: mailTemplate(), e: effect("send_email", `{"to":"finance@example.com","subject":"Q3"}`)},
		{name: "domain case folded", g: mailTemplate(), e: effect("send_email", `{"to":"Finance@EXAMPLE.org","subject":"Q3"}`)},
		{name: "look-alike domain", g: mailTemplate(), e: effect("send_email", `{"to":"finance@exarnple.com","subject":"Q3"}`),
			reason: grant.ReasonBounds, path: "/to"},
		{name: "subdomain", g: mailTemplate(), e: effect("send_email", `{"to":"a@evil.example.com","subject":"Q3"}`),
			reason: grant.ReasonBounds, path: "/to"},
		{name: "two recipients in one string", g: mailTemplate(),
			e:      effect("send_email", `{"to":"evil@attacker.test, finance@example.com","subject":"Q3"}`),
			reason: grant.ReasonBounds, path: "/to"},
		{name: "display name", g: mailTemplate(), e: effect("send_email", `{"to":"Finance <f@example.com>","subject":"Q3"}`),
			reason: grant.ReasonBounds, path: "/to"},
		{name: "two at signs", g: mailTemplate(), e: effect("send_email", `{"to":"a@attacker.test@example.com","subject":"Q3"}`),
			reason: grant.ReasonBounds, path: "/to"},
		{name: "recipient list", g: mailTemplate(), e: effect("send_email", `{"to":["finance@example.com"],"subject":"Q3"}`),
			reason: grant.ReasonType, path: "/to"},
		{name: "subject too long", g: mailTemplate(),
			e:      effect("send_email", `{"to":"finance@example.com","subject":"0123456789012345678901234567890123456789+"}`),
			reason: grant.ReasonBounds, path: "/subject"},
		{name: "an unpinned bcc", g: mailTemplate(),
			e:      effect("send_email", `{"bcc":"x@attacker.test","to":"finance@example.com","subject":"Q3"}`),
			reason: grant.ReasonUnpinned, path: "/bcc"},

		{name: "one of", g: oneOf(), e: effect("set_plan", `{"plan":"basic"}`)},
		{name: "not one of", g: oneOf(), e: effect("set_plan", `{"plan":"enterprise"}`), reason: grant.ReasonValue, path: "/plan"},
		{name: "pinned object as a whole", g: nested(), e: effect("ship", `{"items":[{"sku":"X","n":2}],"addr":{"zip":"10115","city":"Berlin"}}`)},
		{name: "pinned object with one more key", g: nested(),
			e:      effect("ship", `{"items":[{"sku":"X","n":2}],"addr":{"zip":"10115","city":"Berlin","c/o":"Eve"}}`),
			reason: grant.ReasonValue, path: "/addr"},
		{name: "array element beyond the pinned ones", g: nested(),
			e:      effect("ship", `{"items":[{"sku":"X","n":2},{"sku":"Y","n":1}],"addr":{"zip":"10115","city":"Berlin"}}`),
			reason: grant.ReasonUnpinned, path: "/items/1/n"},
		{name: "escaped keys", g: escaped(), e: effect("t", `{"a/b":1,"c~d":2}`)},
		{name: "no arguments, no rules", g: noArgs(), e: effect("ping", `{}`)},
		{name: "an argument where none is granted", g: noArgs(), e: effect("ping", `{"x":1}`),
			reason: grant.ReasonUnpinned, path: "/x"},
		{name: "whole arguments pinned", g: wholeArgs(), e: effect("t", `{"b":[1,2],"a":"x"}`)},
		{name: "whole arguments differ", g: wholeArgs(), e: effect("t", `{"b":[1,2],"a":"x","c":0}`),
			reason: grant.ReasonValue, path: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range []canon.Effect{tt.e} {
				cov, err := grant.Covers(tt.g, e)
				require.NoError(t, err)
				if tt.reason == "" {
					assert.True(t, cov.Covered, "%+v", cov)
					assert.Equal(t, grant.Coverage{Covered: true}, cov)
					continue
				}
				assert.False(t, cov.Covered)
				assert.Equal(t, tt.reason, cov.Reason)
				assert.Equal(t, tt.path, cov.Path)
			}
		})
	}
}

func oneOf() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "set_plan", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{{Path: "/plan", OneOf: []json.RawMessage{[]byte(`"basic"`), []byte(`"pro"`)}}},
	}}
}

func nested() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "ship", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{
			grant.Pin("/items/0/sku", "X"),
			grant.Range("/items/0/n", "1", "3"),
			{Path: "/addr", Equals: []byte(`{"city":"Berlin","zip":"10115"}`)},
		},
	}}
}

func escaped() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "t", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/a~1b", 1), grant.Pin("/c~0d", 2)},
	}}
}

func noArgs() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "ping", Audience: "payments", User: "user:dana"}}
}

func wholeArgs() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "t", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{{Path: "", Equals: []byte(`{"a":"x","b":[1,2]}`)}},
	}}
}

func TestCoversDigests(t *testing.T) {
	approved := []canon.Effect{
		refund(`{"order":"A-17","amount":120}`),
		refund(`{"order":"B-02","amount":35.5}`),
		refund(`{"order":"C-88","amount":12}`),
	}
	plan := grant.Plan(digest(t, approved[0]), digest(t, approved[1]), digest(t, approved[2]))
	exact := grant.Exact(digest(t, approved[0]))
	tests := []struct {
		name    string
		g       grant.Grant
		e       canon.Effect
		covered bool
	}{
		{"exact", exact, approved[0], true},
		{"exact, keys reordered and respelled", exact, refund(`{ "amount": 1.2e2, "order": "A-17" }`), true},
		{"exact, amount changed", exact, refund(`{"order":"A-17","amount":1200}`), false},
		{"exact, another step", exact, with(approved[0], func(e *canon.Effect) { e.Step = "s2" }), false},
		{"exact, another user", exact, with(approved[0], func(e *canon.Effect) { e.Principal.User = "user:eve" }), false},
		{"plan, step 1", plan, approved[0], true},
		{"plan, step 2", plan, approved[1], true},
		{"plan, step 3", plan, approved[2], true},
		{"plan, one more call", plan, refund(`{"order":"D-01","amount":12}`), false},
		{"plan, a step with another amount", plan, refund(`{"order":"B-02","amount":355}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cov, err := grant.Covers(tt.g, tt.e)
			require.NoError(t, err)
			assert.Equal(t, tt.covered, cov.Covered)
			if !tt.covered {
				assert.Equal(t, grant.ReasonDigest, cov.Reason)
			}
		})
	}
}

func TestCoversFailsClosed(t *testing.T) {
	good := refund(`{"order":"A-17","currency":"EUR","amount":10}`)
	tests := []struct {
		name string
		g    grant.Grant
		e    canon.Effect
		want error
	}{
		{"zero grant", grant.Grant{}, good, grant.ErrInvalidGrant},
		{"malformed template", grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{Tool: "t"}}, good, grant.ErrInvalidGrant},
		{"args not an object", refundTemplate(), refund(`[1]`), canon.ErrNotObject},
		{"duplicate key", refundTemplate(), refund(`{"order":"A-17","order":"B-1","currency":"EUR","amount":1}`), canon.ErrDuplicateKey},
		{"inexact number", refundTemplate(), refund(`{"order":"A-17","currency":"EUR","amount":0.30000000000000001}`), canon.ErrNumber},
		{"exact grant, bad effect", grant.Exact(canon.Sum([]byte("x"))), refund(`{"a":1e400}`), canon.ErrNumber},
		{"invalid UTF-8 in a field", refundTemplate(), with(good, func(e *canon.Effect) { e.Task = "\xff" }), canon.ErrInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cov, err := grant.Covers(tt.g, tt.e)
			assert.ErrorIs(t, err, tt.want)
			assert.False(t, cov.Covered)
		})
	}
}

// naiveCovers is the template check that looks only at the arguments it
// knows: each rule's argument present and equal, anything else ignored.
func naiveCovers(t *grant.Template, args map[string]any) bool {
	for _, r := range t.Args {
		v, ok := args[r.Path[1:]]
		if !ok || (r.Equals != nil && string(r.Equals) != `"`+v.(string)+`"`) {
			return false
		}
	}
	return true
}

// TestUnpinnedArgumentAttack: the agent adds a bcc the user never saw. A
// check that looks only at the pinned arguments lets it through.
func TestUnpinnedArgumentAttack(t *testing.T) {
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "send_email", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/to", "finance@example.com"), grant.Pin("/subject", "Q3")},
	}}
	args := map[string]any{"to": "finance@example.com", "subject": "Q3", "bcc": "drop@attacker.test"}
	assert.True(t, naiveCovers(g.Template, args), "the naive check covers the extra bcc")

	cov, err := grant.Covers(g, effect("send_email", `{"to":"finance@example.com","subject":"Q3","bcc":"drop@attacker.test"}`))
	require.NoError(t, err)
	assert.False(t, cov.Covered)
	assert.Equal(t, "/bcc", cov.Path)
}
