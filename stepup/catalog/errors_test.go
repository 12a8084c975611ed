package catalog_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/catalog"
)

// doc is a catalog with one tool, tool, and groups, one value a line:
// line 1 "{", line 2 the groups, line 3 `"tools": [`, line 4 the tool.
func doc(groups, tool string) string {
	if groups != "" {
		groups = `"groups": [` + groups + `],`
	}
	return "{\n" + groups + "\n\"tools\": [\n" + tool + "\n]\n}"
}

const okGroups = `{"name": "finance", "members": ["user:ann", "user:bob"]}`

// TestBrokenCatalogs is the table of broken catalogs: each is refused with
// ErrCatalog in an *Error that names the file, the line and the field.
func TestBrokenCatalogs(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
		pointer   string
		problem   string
	}{
		{"unknown class", doc("", `{"name": "a", "class": "harmless"}`), 4, "/tools/0/class", "must be one of"},
		{"class in capitals", doc("", `{"name": "a", "class": "READ"}`), 4, "/tools/0/class", "must be one of"},
		{"bad argument schema", doc("", `{"name": "a", "class": "read", "schema": {"type": "text"}}`), 4, "/tools/0/schema", "does not compile"},
		{"argument schema not an object", doc("", `{"name": "a", "class": "read", "schema": []}`), 4, "/tools/0/schema", "want object"},
		{"argument schema loads a file", doc("", `{"name": "a", "class": "read", "schema": {"$ref": "file:///etc/passwd"}}`), 4, "/tools/0/schema", "does not compile"},
		{"duplicate tool", "{\n\"tools\": [\n{\"name\": \"a\", \"class\": \"read\"},\n{\"name\": \"a\", \"class\": \"irreversible\"}\n]\n}", 4, "/tools/1/name", "given twice"},
		{"duplicate group", doc(okGroups+",\n"+okGroups, `{"name": "a", "class": "read"}`), 3, "/groups/1/name", "given twice"},
		{"group with no members", doc(`{"name": "finance", "members": []}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members", "minItems"},
		{"group without members", doc(`{"name": "finance"}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members", "missing field"},
		{"member twice", doc(`{"name": "finance", "members": ["user:ann", "user:ann"]}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members/1", "a member twice"},
		{"quorum larger than its group", doc(okGroups, `{"name": "a", "class": "irreversible", "approvers": "finance", "quorum": 3}`), 4, "/tools/0/quorum", "larger than group"},
		{"quorum without a group", doc("", `{"name": "a", "class": "irreversible", "quorum": 2}`), 4, "/tools/0/quorum", "needs an approver group"},
		{"quorum over the store's bound", doc(okGroups, `{"name": "a", "class": "irreversible", "approvers": "finance", "quorum": 17}`), 4, "/tools/0/quorum", "maximum"},
		{"tool naming an undefined group", doc(okGroups, `{"name": "a", "class": "irreversible", "approvers": "admins"}`), 4, "/tools/0/approvers", `"admins"`},
		{"escalation to an undefined group", doc(okGroups, `{"name": "a", "class": "irreversible", "timeout": {"after": "1h", "outcome": "escalate", "escalate_to": "ops"}}`), 4, "/tools/0/timeout/escalate_to", `"ops"`},
		{"escalation to nobody", doc(okGroups, `{"name": "a", "class": "irreversible", "timeout": {"after": "1h", "outcome": "escalate"}}`), 4, "/tools/0/timeout/escalate_to", "needs escalate_to"},
		{"alternative not listed", doc("", `{"name": "a", "class": "irreversible", "timeout": {"outcome": "alternative", "alternative": "b"}}`), 4, "/tools/0/timeout/alternative", "does not list"},
		{"alternative itself", doc("", `{"name": "a", "class": "irreversible", "timeout": {"outcome": "alternative", "alternative": "a"}}`), 4, "/tools/0/timeout/alternative", "own alternative"},
		{"unknown outcome", doc("", `{"name": "a", "class": "irreversible", "timeout": {"outcome": "retry"}}`), 4, "/tools/0/timeout/outcome", "must be one of"},
		{"bad duration", doc("", `{"name": "a", "class": "irreversible", "timeout": {"after": "ten minutes"}}`), 4, "/tools/0/timeout/after", "does not match pattern"},
		{"zero duration", doc("", `{"name": "a", "class": "irreversible", "timeout": {"after": "0s"}}`), 4, "/tools/0/timeout/after", "positive"},
		{"overflowing duration", doc("", `{"name": "a", "class": "irreversible", "timeout": {"after": "9999999999h"}}`), 4, "/tools/0/timeout/after", "positive"},
		{"executor timeout too long", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "timeout": "11m"}}`), 4, "/tools/0/executor/timeout", "1ms to 10m"},
		{"executor timeout too short", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "timeout": "900us"}}`), 4, "/tools/0/executor/timeout", "1ms to 10m"},
		{"executor timeout not a duration", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "timeout": "soon"}}`), 4, "/tools/0/executor/timeout", "pattern"},
		{"executor timeout a number", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "timeout": 10}}`), 4, "/tools/0/executor/timeout", "want string"},
		{"executor retries too many", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "retries": 11}}`), 4, "/tools/0/executor/retries", "maximum"},
		{"executor retries negative", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://t.test/a", "retries": -1}}`), 4, "/tools/0/executor/retries", "minimum"},
		{"executor without url", doc("", `{"name": "a", "class": "irreversible", "executor": {"timeout": "1s"}}`), 4, "/tools/0/executor/url", "missing field"},
		{"bad url scheme", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "ftp://t.test/a"}}`), 4, "/tools/0/executor/url", "pattern"},
		{"url without host", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https:///a"}}`), 4, "/tools/0/executor/url", "with a host"},
		{"url with a password", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "https://u:p@t.test/a"}}`), 4, "/tools/0/executor/url", "no user"},
		{"url not a url", doc("", `{"name": "a", "class": "irreversible", "executor": {"url": "http://t.test:port/a"}}`), 4, "/tools/0/executor/url", "not an http"},
		{"bad principal", doc(`{"name": "finance", "members": ["user:Ann"]}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members/0", "principal id"},
		{"agent as a member", doc(`{"name": "finance", "members": ["user:ann", "agent:bot"]}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members/1", "person's"},
		{"look-alike principal", doc(`{"name": "finance", "members": ["user:аnn"]}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/members/0", "principal id"},
		{"duplicate key in a tool", doc("", `{"name": "a", "class": "read", "class": "irreversible"}`), 4, "/tools/0/class", "given twice"},
		{"duplicate key spelt with an escape", doc("", `{"name": "a", "class": "read", "\u0063lass": "irreversible"}`), 4, "/tools/0/class", "given twice"},
		{"field in other case beside its twin", doc("", `{"name": "a", "class": "read", "Class": "irreversible"}`), 4, "/tools/0/Class", "unknown field"},
		{"duplicate key in arguments schema", doc("", `{"name": "a", "class": "read", "schema": {"type": "object", "type": "string"}}`), 4, "/tools/0/schema/type", "given twice"},
		{"duplicate top-level key", "{\n\"tools\": [],\n\"tools\": [{\"name\": \"a\", \"class\": \"read\"}]\n}", 3, "/tools", "given twice"},
		{"unknown field at the top", "{\n\"tools\": [],\n\"tool\": []\n}", 3, "/tool", "unknown field"},
		{"unknown field in a tool", doc("", `{"name": "a", "class": "read", "hints": {}}`), 4, "/tools/0/hints", "unknown field"},
		{"unknown field in a group", doc(`{"name": "finance", "members": ["user:ann"], "quorum": 1}`, `{"name": "a", "class": "read"}`), 2, "/groups/0/quorum", "unknown field"},
		{"unknown field in a card", doc("", `{"name": "a", "class": "read", "card": {"colour": "red"}}`), 4, "/tools/0/card/colour", "unknown field"},
		{"unknown field in a timeout", doc("", `{"name": "a", "class": "read", "timeout": {"after": "1h", "x": 1}}`), 4, "/tools/0/timeout/x", "unknown field"},
		{"unknown field in an executor", doc("", `{"name": "a", "class": "read", "executor": {"url": "https://t.test/", "method": "GET"}}`), 4, "/tools/0/executor/method", "unknown field"},
		{"misspelt field beside a missing one", doc("", `{"name": "a", "clas": "read"}`), 4, "/tools/0/clas", "unknown field"},
		{"unknown reference kind", doc("", `{"name": "a", "class": "read", "refs": {"p": "path"}}`), 4, "/tools/0/refs/p", "unknown reference kind"},
		{"amount limit as a string", doc("", `{"name": "a", "class": "read", "max_amount": {"amount": "500"}}`), 4, "/tools/0/max_amount/amount", "want number"},
		{"amount limit beyond exact", doc("", `{"name": "a", "class": "read", "max_amount": {"amount": 1e400}}`), 4, "/tools/0/max_amount/amount", "cannot be hashed"},
		{"empty domain list", doc("", `{"name": "a", "class": "read", "allow_domains": {"to": []}}`), 4, "/tools/0/allow_domains/to", "minItems"},
		{"bad tool name", doc("", `{"name": "bad name!", "class": "read"}`), 4, "/tools/0/name", "pattern"},
		{"reserved tool name", doc("", `{"name": "asu.cancel", "class": "read"}`), 4, "/tools/0/name", "gate's own"},
		{"bad currency", doc("", `{"name": "a", "class": "read", "card": {"fixed_currency": "euro"}}`), 4, "/tools/0/card/fixed_currency", "pattern"},
		{"tool without a name", doc("", `{"class": "read"}`), 4, "/tools/0/name", "missing field"},
		{"no tools", "{\n\"version\": \"v1\"\n}", 1, "/tools", "missing field"},
		{"version a number", "{\n\"version\": 7,\n\"tools\": []\n}", 2, "/version", "want string"},
		{"version with a space", "{\n\"version\": \"v 1\",\n\"tools\": []\n}", 2, "/version", "pattern"},
		{"not JSON", "{\n\"tools\": [\n{\"name\": \"a\" \"class\": \"read\"}\n]\n}", 3, "", "not JSON"},
		{"cut short", "{\n\"tools\": [\n", 3, "", "not JSON"},
		{"data after the catalog", "{\"tools\": []}\n{}", 2, "", "data after"},
		{"too deep", "{\"tools\": [{\"name\": \"a\", \"class\": \"read\", \"schema\": " + strings.Repeat(`{"not":`, 80) + "{}" + strings.Repeat("}", 80) + "}]}", 1, "", "nested deeper than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.Parse(strings.NewReader(tc.doc), &catalog.Options{File: "team.json"})
			require.Error(t, err)
			assert.ErrorIs(t, err, catalog.ErrCatalog)
			var ce *catalog.Error
			require.True(t, errors.As(err, &ce), "%T %v", err, err)
			assert.Equal(t, "team.json", ce.File)
			assert.Equal(t, tc.line, ce.Line, "%v", err)
			assert.Positive(t, ce.Column, "%v", err)
			if tc.pointer != "" {
				assert.Equal(t, tc.pointer, ce.Pointer, "%v", err)
			}
			assert.Contains(t, ce.Problem, tc.problem, "%v", err)
			assert.True(t, strings.HasPrefix(err.Error(), "team.json:"), "%v", err)
		})
	}
}

// TestErrorColumn: the column is where the value at fault starts, in
// characters.
func TestErrorColumn(t *testing.T) {
	_, err := catalog.Parse(strings.NewReader("{\"tools\": [{\"title\": \"é\", \"name\": \"a\", \"class\": \"x\"}]}"), &catalog.Options{File: "c.json"})
	var ce *catalog.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 1, ce.Line)
	assert.Equal(t, strings.Index("{\"tools\": [{\"title\": \"é\", \"name\": \"a\", \"class\": \"x\"}]}", `"x"`), ce.Column)
	assert.Equal(t, `c.json:1:49: /tools/0/class: value must be one of 'read', 'reversible', 'external', 'irreversible'`, err.Error())
}

// TestFileRefusals: refusals of the file as a whole still name it.
func TestFileRefusals(t *testing.T) {
	for name, data := range map[string]string{
		"empty":     ``,
		"not UTF-8": "{\"version\":\"\xff\",\"tools\":[]}",
		"too large": `{"tools":[` + strings.Repeat(" ", catalog.MaxBytes) + `]}`,
		"array":     `[]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := catalog.Parse(strings.NewReader(data), &catalog.Options{File: "big.json"})
			var ce *catalog.Error
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, catalog.ErrCatalog)
			assert.Equal(t, "big.json", ce.File)
		})
	}
	_, err := catalog.ParseFile("testdata/no-such-file.json", nil)
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	assert.ErrorContains(t, err, "testdata/no-such-file.json")
}

// TestDuplicateKeyDowngrade: a tool's class given twice would be read as
// the last by encoding/json alone, turning an irreversible tool into a
// read that runs unapproved; Parse refuses the file instead.
func TestDuplicateKeyDowngrade(t *testing.T) {
	file := `{"tools": [{"name": "wire_money", "class": "irreversible", "class": "read"}]}`
	var naive struct {
		Tools []struct{ Class string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(file), &naive))
	assert.Equal(t, "read", naive.Tools[0].Class, "the naive reading downgrades the tool")
	_, err := catalog.Parse(strings.NewReader(file), nil)
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	assert.ErrorContains(t, err, `/tools/0/class: key "class" given twice`)
}
