package catalog_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/catalog"
)

const serviceCatalog = "../../examples/service/catalog.json"

func serviceTests(t testing.TB) *catalog.Tests {
	t.Helper()
	tests, err := catalog.ParseTestsFile(catalog.DefaultTests(serviceCatalog))
	require.NoError(t, err)
	return tests
}

// edit parses the example catalog with one textual change.
func edit(t testing.TB, old, new string) *catalog.Catalog {
	t.Helper()
	raw, err := os.ReadFile(serviceCatalog)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(raw), old), "the edit must hit once: %s", old)
	c, err := catalog.Parse(strings.NewReader(strings.Replace(string(raw), old, new, 1)), &catalog.Options{File: "edited.json"})
	require.NoError(t, err)
	return c
}

// TestCheckExample: the example catalog passes its own test file, case
// by case, each placed on its line.
func TestCheckExample(t *testing.T) {
	c, err := catalog.ParseFile(serviceCatalog, nil)
	require.NoError(t, err)
	tests := serviceTests(t)
	rep, err := c.Check(context.Background(), tests)
	require.NoError(t, err)
	assert.Zero(t, rep.Failed())
	require.Len(t, rep.Results, len(tests.Cases))
	lines := strings.Split(mustRead(t, catalog.DefaultTests(serviceCatalog)), "\n")
	for _, res := range rep.Results {
		require.Positive(t, res.Case.Line)
		assert.Contains(t, lines[res.Case.Line-1], "{", "case %q starts on its line", res.Case.Name)
		assert.Contains(t, lines[res.Case.Line], res.Case.Name)
	}
	var b bytes.Buffer
	require.NoError(t, rep.Write(&b, false))
	assert.Equal(t, "ok   7 cases under policy 2026-12-02.1 ("+serviceCatalog+")\n", b.String())
}

func mustRead(t testing.TB, path string) string {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

// TestCheckCatchesFlips: every edit of the catalog that flips a decision
// the test file pins fails it, naming the case and what differs; edits
// that flip none pass.
func TestCheckCatchesFlips(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		failed         int
		differs        string
	}{
		{"limit raised", `"max_amount": {"amount": 500}`, `"max_amount": {"amount": 1000}`, 1, "decision"},
		{"limit lowered", `"max_amount": {"amount": 500}`, `"max_amount": {"amount": 100}`, 2, "decision"},
		{"read made external", `"class": "read",`, `"class": "external",`, 1, "decision"},
		{"refund made unattended", `"max_amount": {"amount": 500},`, `"max_amount": {"amount": 500}, "unattended": true,`, 2, "decision"},
		{"rule of two dropped", `"quorum": 2,`, ``, 1, "quorum"},
		{"refund to another group", `"approvers": "support-leads",`, `"approvers": "admins",`, 2, "approvers"},
		{"schema loosened", `"pattern": "^[A-Z]-[0-9]{1,8}$"}},`, `"pattern": "^.*$"}},`, 1, "decision"},
		{"tool renamed", `"name": "lookup_order",`, `"name": "get_order",`, 2, "decision"},
		{"version bumped only", `"version": "2026-12-02.1",`, `"version": "2026-12-03.1",`, 0, ""},
		{"title changed", `"title": "Issue a refund",`, `"title": "Refund an order",`, 0, ""},
		{"timeout changed", `"after": "30m"`, `"after": "1h"`, 0, ""},
		{"executor moved", `"http://127.0.0.1:8790/issue_refund"`, `"https://refunds.internal/issue"`, 0, ""},
		{"member added", `["user:ann", "user:bob"]`, `["user:ann", "user:bob", "user:carl"]`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := edit(t, tc.old, tc.new).Check(context.Background(), serviceTests(t))
			require.NoError(t, err)
			assert.Equal(t, tc.failed, rep.Failed())
			var b bytes.Buffer
			require.NoError(t, rep.Write(&b, false))
			if tc.failed == 0 {
				assert.True(t, strings.HasPrefix(b.String(), "ok   7 cases"), b.String())
				return
			}
			assert.Contains(t, b.String(), "FAIL "+catalog.DefaultTests(serviceCatalog)+":")
			assert.Contains(t, b.String(), "("+tc.differs)
			assert.Contains(t, b.String(), "\n  - want ")
			assert.Contains(t, b.String(), "\n  + got  ")
			assert.Contains(t, b.String(), "cases under policy")
		})
	}
}

// TestCheckReport pins the report of one failing case.
func TestCheckReport(t *testing.T) {
	c := parse(t, `{"version":"v1","groups":[{"name":"ops","members":["user:ann","user:bob"]}],
"tools":[{"name":"wipe","class":"irreversible","approvers":"ops"}]}`)
	tests, err := catalog.ParseTests(strings.NewReader(`{"cases": [
  {"name": "wipe needs two", "tool": "wipe", "args": {},
   "want": {"decision": "needs_approval", "approvers": "ops", "quorum": 2}},
  {"name": "wipe is not allowed", "tool": "wipe", "args": {}, "taint": ["web"],
   "principal": {"user": "user:ann", "agent": "agent:bot"},
   "want": {"decision": "deny", "reason": "nope"}}
]}`), "ops.test.json")
	require.NoError(t, err)
	rep, err := c.Check(context.Background(), tests)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, rep.Write(&b, false))
	assert.Equal(t, `FAIL ops.test.json:2: wipe needs two (quorum differs)
  - want needs_approval by ops quorum 2
  + got  needs_approval by ops (user:ann, user:bob) quorum 1: "irreversible effect"
FAIL ops.test.json:4: wipe is not allowed (decision, reason differs)
  - want deny: reason containing "nope"
  + got  needs_approval by ops (user:ann, user:bob) quorum 1: "irreversible effect after untrusted content"
FAIL 2 of 2 cases under policy v1 (test.json)
`, b.String())
	assert.Equal(t, 2, rep.Failed())
}

// TestTestsRefusals: a broken test file is refused like a broken catalog.
func TestTestsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
		pointer   string
	}{
		{"unknown decision", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\", \"args\": {}, \"want\": {\"decision\": \"maybe\"}}\n]}", 2, "/cases/0/want/decision"},
		{"unknown field", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\", \"args\": {}, \"want\": {\"decision\": \"allow\", \"by\": \"x\"}}\n]}", 2, "/cases/0/want/by"},
		{"args not an object", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\", \"args\": [], \"want\": {\"decision\": \"allow\"}}\n]}", 2, "/cases/0/args"},
		{"args beyond exact", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\",\n\"args\": {\"n\": 9007199254740993}, \"want\": {\"decision\": \"allow\"}}\n]}", 3, "/cases/0/args"},
		{"bad principal", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\", \"args\": {},\n\"principal\": {\"user\": \"agent:x\", \"agent\": \"agent:y\"}, \"want\": {\"decision\": \"allow\"}}\n]}", 3, "/cases/0/principal"},
		{"quorum on an allow", "{\"cases\": [\n{\"name\": \"a\", \"tool\": \"t\", \"args\": {}, \"want\": {\"decision\": \"allow\", \"quorum\": 2}}\n]}", 2, "/cases/0/want"},
		{"no cases", "{\n\"cases\": []\n}", 2, "/cases"},
		{"duplicate key", "{\"cases\": [\n{\"name\": \"a\", \"name\": \"b\", \"tool\": \"t\", \"args\": {}, \"want\": {\"decision\": \"allow\"}}\n]}", 2, "/cases/0/name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.ParseTests(strings.NewReader(tc.doc), "x.test.json")
			var ce *catalog.Error
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, catalog.ErrCatalog)
			assert.Equal(t, "x.test.json", ce.File)
			assert.Equal(t, tc.line, ce.Line, "%v", err)
			assert.Equal(t, tc.pointer, ce.Pointer, "%v", err)
		})
	}
}

func TestDefaultTests(t *testing.T) {
	assert.Equal(t, "team/catalog.test.json", catalog.DefaultTests("team/catalog.json"))
	assert.Equal(t, "policy.test", catalog.DefaultTests("policy"))
}
