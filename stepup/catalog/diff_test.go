package catalog_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/catalog"
)

// TestCompare: every kind of change between two catalogs is listed, and
// the version line says what a new version does to approvals in flight.
func TestCompare(t *testing.T) {
	old := parse(t, `{"version":"v1",
"groups":[{"name":"finance","members":["user:ann","user:bob"]},{"name":"gone","members":["user:x"]}],
"tools":[
 {"name":"read_file","class":"read"},
 {"name":"write_draft","class":"reversible"},
 {"name":"issue_refund","class":"irreversible","max_amount":{"amount":500},"approvers":"finance",
  "executor":{"url":"https://tools.internal/refund","timeout":"10s"}}]}`)
	new := parse(t, `{"version":"v2",
"groups":[{"name":"finance","members":["user:ann","user:carl"]},{"name":"admins","members":["user:dan","user:eve"]}],
"tools":[
 {"name":"read_file","class":"external"},
 {"name":"delete_customer","class":"irreversible","approvers":"admins","quorum":2},
 {"name":"issue_refund","class":"irreversible","max_amount":{"amount":1000},"approvers":"finance","quorum":2,
  "executor":{"url":"https://tools.internal/refund","timeout":"30s","retries":2}}]}`)
	d := catalog.Compare(old, new)
	var lines []string
	for _, c := range d.Changes {
		lines = append(lines, c.String())
	}
	assert.Equal(t, []string{
		"+ tool delete_customer: irreversible, approvers admins, quorum 2",
		"~ tool issue_refund: /executor/retries: (none) -> 2",
		"~ tool issue_refund: /executor/timeout: \"10s\" -> \"30s\"",
		"~ tool issue_refund: /max_amount/amount: 500 -> 1000",
		"~ tool issue_refund: /quorum: (none) -> 2",
		"~ tool read_file: /class: \"read\" -> \"external\"",
		"- tool write_draft: reversible",
		"+ group admins: user:dan, user:eve",
		"- group gone: user:x",
		"+ group finance: /members: user:carl",
		"- group finance: /members: user:bob",
	}, lines)
	var b bytes.Buffer
	require.NoError(t, d.Write(&b))
	assert.Contains(t, b.String(), "policy version: v1 -> v2\n")
	assert.Contains(t, b.String(), "approvals made under v1 and not yet executed are void")

	b.Reset()
	require.NoError(t, catalog.Compare(old, old).Write(&b))
	assert.Equal(t, "policy version: v1, unchanged\nno changes to tools or groups\n", b.String())

	// The same version over different rules is called out.
	same := parse(t, `{"version":"v1","tools":[{"name":"read_file","class":"read"}]}`)
	b.Reset()
	require.NoError(t, catalog.Compare(old, same).Write(&b))
	assert.Contains(t, b.String(), "unchanged, but the policy changed")
}
