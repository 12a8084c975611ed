package mcpgate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// TestCatalogFormat: the MCP gateway reads the one catalog format, with
// its extension: path references, groups a program may define in Go, and
// no executor blocks (the upstream runs every tool).
func TestCatalogFormat(t *testing.T) {
	c, err := mcpgate.ParseCatalogFile("../../examples/mcp/catalog.json")
	require.NoError(t, err)
	assert.Equal(t, "2026-11-30.1-mcp", c.Version)
	assert.Equal(t, "external", c.Class("send_email"))

	c, err = mcpgate.ParseCatalog(strings.NewReader(`{"groups":[{"name":"ops","members":["user:ann","user:bob"]}],
"tools":[{"name":"w","class":"irreversible","approvers":"ops","quorum":2,"refs":{"p":"path"}},
{"name":"x","class":"irreversible","approvers":"defined-in-go"}]}`))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"ops": {"user:ann", "user:bob"}}, c.ApproverGroups())
	assert.Regexp(t, `^sha256:`, c.Version, "without a version, the content hash")

	_, err = mcpgate.ParseCatalog(strings.NewReader("{\"tools\":[\n{\"name\":\"w\",\"class\":\"read\",\"executor\":{\"url\":\"https://t.test/\"}}]}"))
	var ce *mcpgate.CatalogError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, "/tools/0/executor", ce.Pointer)

	_, err = mcpgate.ParseCatalogFile("testdata/no-such-catalog.json")
	assert.ErrorContains(t, err, "testdata/no-such-catalog.json")
}
