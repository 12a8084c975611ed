package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

func parse(t testing.TB, doc string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Parse(strings.NewReader(doc), &catalog.Options{File: "test.json"})
	require.NoError(t, err)
	return c
}

func decide(t testing.TB, c *catalog.Catalog, tool, args string) plug.Decision {
	t.Helper()
	canonical, err := canon.Canonicalize([]byte(args))
	require.NoError(t, err)
	d, err := c.Policy().Decide(context.Background(), plug.Proposal{Tool: tool, Args: canonical,
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	return d
}

// TestParseFull reads every field of the format and checks each reaches
// the policy, the groups or the executor specs.
func TestParseFull(t *testing.T) {
	c, err := catalog.ParseFile("testdata/full.json", nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-12-02.1", c.Version)
	assert.True(t, c.Declared)
	assert.Equal(t, "testdata/full.json", c.File)
	assert.Equal(t, "2026-12-02.1", c.Policy().Version())
	assert.Equal(t, map[string][]string{"finance": {"user:ann", "user:bob"}, "oncall": {"user:carl"}}, c.ApproverGroups())
	assert.Equal(t, map[string]catalog.Executor{"issue_refund": {URL: "https://tools.internal/refund",
		Timeout: 10 * time.Second, Retries: 2}}, c.Executors())

	route, ok := c.Policy().Route("issue_refund", c.Version)
	require.True(t, ok)
	assert.Equal(t, plug.Route{Approvers: "finance", Quorum: 2, Timeout: plug.Timeout{After: time.Hour,
		Outcome: plug.OutcomeEscalate, EscalateTo: "oncall"}}, route)
	route, ok = c.Policy().Route("send_email", c.Version)
	require.True(t, ok)
	assert.Equal(t, plug.Timeout{After: 15 * time.Minute, Outcome: plug.OutcomeAlternative, Alternative: "write_draft"}, route.Timeout)

	for _, tc := range []struct {
		tool, args string
		verdict    plug.Verdict
		reason     string
	}{
		{"read_file", `{"path":"q3.csv"}`, plug.Allow, "read effect"},
		{"read_file", `{"path":7}`, plug.Deny, "must name a file"},
		{"write_draft", `{}`, plug.Allow, "reversible effect"},
		{"send_email", `{"to":"a@example.com","subject":"hi"}`, plug.NeedsApproval, "external effect"},
		{"send_email", `{"subject":"hi"}`, plug.Deny, "schema"},
		{"send_email", `{"to":"a@evil.example"}`, plug.Deny, "allowlist"},
		{"send_email", `{"to":"a@example.com","subject":"` + strings.Repeat("x", 201) + `"}`, plug.Deny, "longer than the catalog allows"},
		{"send_email", `{"to":"a@example.com","body":"` + strings.Repeat("x", 4096) + `"}`, plug.Deny, "larger than the catalog allows"},
		{"issue_refund", `{"amount":500}`, plug.NeedsApproval, "irreversible effect"},
		{"issue_refund", `{"amount":500.0000000001}`, plug.Deny, "over the per-call limit"},
		{"delete_all", `{}`, plug.Deny, "unknown tool"},
	} {
		d := decide(t, c, tc.tool, tc.args)
		assert.Equal(t, tc.verdict, d.Verdict, "%s %s: %s", tc.tool, tc.args, d.Reason)
		assert.Contains(t, d.Reason, tc.reason, "%s %s", tc.tool, tc.args)
	}
	d := decide(t, c, "issue_refund", `{"amount":10}`)
	assert.Equal(t, "refunds", d.Audience)
	assert.Equal(t, plug.Hints{Amount: "amount", FixedCurrency: "EUR", Units: map[string]string{"weight": "kg"}}, d.Hints)
	assert.Equal(t, "Issue a refund", d.Title)
	d = decide(t, c, "send_email", `{"to":"a@example.com"}`)
	assert.Equal(t, []string{"example.com"}, d.Trusted)
	assert.Equal(t, "write_draft", decide(t, c, "write_draft", `{}`).Title, "a tool without a title shows its name")
}

// TestContentVersion: without "version" the policy version is the hash
// of the canonical content. Key order, whitespace and escapes do not
// change it; any change of substance does.
func TestContentVersion(t *testing.T) {
	base := parse(t, `{"tools":[{"name":"a","class":"read"},{"name":"b","class":"irreversible","max_amount":{"x":5}}]}`)
	assert.False(t, base.Declared)
	assert.Regexp(t, `^sha256:[0-9a-f]{16}$`, base.Version)
	assert.Equal(t, base.Version, base.Policy().Version())
	for _, same := range []string{
		"{\n  \"tools\": [\n    {\"class\": \"read\", \"name\": \"a\"},\n    {\"name\": \"b\", \"max_amount\": {\"x\": 5}, \"class\": \"irreversible\"}\n  ]\n}\n",
		`{"tools":[{"name":"\u0061","class":"read"},{"name":"b","class":"irreversible","max_amount":{"x":5.0}}]}`,
	} {
		assert.Equal(t, base.Version, parse(t, same).Version, same)
	}
	for _, other := range []string{
		`{"tools":[{"name":"a","class":"read"},{"name":"b","class":"irreversible","max_amount":{"x":6}}]}`,
		`{"tools":[{"name":"a","class":"read"},{"name":"b","class":"external","max_amount":{"x":5}}]}`,
		`{"tools":[{"name":"b","class":"irreversible","max_amount":{"x":5}},{"name":"a","class":"read"}]}`,
		`{"tools":[{"name":"a","class":"read"}]}`,
	} {
		assert.NotEqual(t, base.Version, parse(t, other).Version, other)
	}
	declared := parse(t, `{"version":"v7","tools":[]}`)
	assert.True(t, declared.Declared)
	assert.Equal(t, "v7", declared.Version)
}

// TestMarshalRoundTrip: what Marshal writes, Parse reads back the same.
func TestMarshalRoundTrip(t *testing.T) {
	c, err := catalog.ParseFile("testdata/full.json", nil)
	require.NoError(t, err)
	raw, err := catalog.Marshal(c.Version, c.Tools, c.Groups)
	require.NoError(t, err)
	back := parse(t, string(raw))
	assert.Equal(t, c.Version, back.Version)
	assert.Equal(t, c.Tools, back.Tools)
	assert.Equal(t, c.Groups, back.Groups)
	assert.Empty(t, catalog.Compare(c, back).Changes)
}

// TestExecutorDefaults: an executor block needs only its URL.
func TestExecutorDefaults(t *testing.T) {
	c := parse(t, `{"tools":[{"name":"a","class":"irreversible","executor":{"url":"http://127.0.0.1:8790/a"}}]}`)
	assert.Equal(t, catalog.Executor{URL: "http://127.0.0.1:8790/a", Timeout: catalog.DefaultExecutorTimeout}, c.Executors()["a"])
	raw, err := json.Marshal(c.Executors()["a"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"url":"http://127.0.0.1:8790/a","timeout":"10s"}`, string(raw))
}

// TestOptions: the extension points a program such as the MCP gateway
// uses.
func TestOptions(t *testing.T) {
	doc := `{"tools":[{"name":"a","class":"read","refs":{"p":"path"},"approvers":"ops"}]}`
	_, err := catalog.Parse(strings.NewReader(doc), nil)
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	_, err = catalog.Parse(strings.NewReader(doc), &catalog.Options{RefKinds: []string{"path"}})
	assert.ErrorContains(t, err, "/tools/0/approvers", "a group nobody defines")
	c, err := catalog.Parse(strings.NewReader(doc), &catalog.Options{RefKinds: []string{"path"}, ProgramGroups: true})
	require.NoError(t, err)
	assert.Equal(t, "ops", c.Tools[0].Approvers)
	_, err = catalog.Parse(strings.NewReader(`{"tools":[{"name":"a","class":"read","executor":{"url":"http://x.test/"}}]}`),
		&catalog.Options{NoExecutors: true})
	assert.ErrorContains(t, err, "/tools/0/executor")
}

// TestBuildAdjust: a program's changes to the policy entries are built
// and checked, and a bad one is refused.
func TestBuildAdjust(t *testing.T) {
	c := parse(t, `{"version":"v1","tools":[{"name":"a","class":"external"}]}`)
	pol, err := c.Build(func(tool catalog.Tool, pt *policy.Tool) error {
		pt.Description = "from the server"
		return nil
	})
	require.NoError(t, err)
	d, err := pol.Decide(context.Background(), plug.Proposal{Tool: "a", Args: []byte(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, "from the server", d.Description)
	_, err = c.Build(func(tool catalog.Tool, pt *policy.Tool) error {
		pt.Schema = []byte(`{"type":7}`)
		return nil
	})
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	assert.ErrorContains(t, err, "/tools/0/schema")
}

// TestSchemaEmbedded: the embedded schemas are JSON and the example
// files of this repository pass them.
func TestSchemaEmbedded(t *testing.T) {
	assert.True(t, json.Valid(catalog.Schema))
	assert.True(t, json.Valid(catalog.TestsSchema))
	for _, f := range []string{"../../examples/service/catalog.json"} {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = catalog.Parse(bytes.NewReader(raw), &catalog.Options{File: f})
		require.NoError(t, err, f)
	}
	_, err := catalog.ParseFile("../../examples/mcp/catalog.json", &catalog.Options{RefKinds: []string{"path"}})
	require.NoError(t, err)
}
