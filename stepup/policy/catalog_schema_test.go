package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/policy"
)

// TestCatalogSchema: the catalog says which schema it enforces, as a copy
// the caller cannot change it through.
func TestCatalogSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	c, err := policy.NewCatalog("v1",
		policy.Tool{Name: "read_file", Class: card.ClassRead, Schema: schema},
		policy.Tool{Name: "ping", Class: card.ClassRead})
	require.NoError(t, err)
	got, ok := c.Schema("read_file")
	require.True(t, ok)
	assert.JSONEq(t, string(schema), string(got))
	got[0] = 'X'
	again, _ := c.Schema("read_file")
	assert.JSONEq(t, string(schema), string(again), "a copy")
	none, ok := c.Schema("ping")
	assert.True(t, ok)
	assert.Nil(t, none, "admitted without a schema")
	_, ok = c.Schema("rm")
	assert.False(t, ok)
}
