package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyExample copies the example catalog and its test file into a
// temporary directory, with one edit of the catalog (none when old is
// empty), and returns the catalog's path.
func copyExample(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile(exampleCatalog)
	require.NoError(t, err)
	if old != "" {
		require.Equal(t, 1, strings.Count(string(raw), old))
		raw = []byte(strings.Replace(string(raw), old, new, 1))
	}
	tests, err := os.ReadFile("../service/catalog.test.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), raw, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.test.json"), tests, 0o600))
	return filepath.Join(dir, "catalog.json")
}

func policyCLI(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := cli(context.Background(), append([]string{"policy"}, args...), &out, &errOut)
	return out.String(), err
}

// TestPolicyTest: the command passes on the example catalog and on an
// edit that flips no decision, and fails, naming the case and its line,
// on an edit that flips one.
func TestPolicyTest(t *testing.T) {
	out, err := policyCLI("test", "-catalog", exampleCatalog)
	require.NoError(t, err, out)
	assert.Equal(t, "ok   7 cases under policy 2026-12-02.1 (../service/catalog.json)\n", out)

	out, err = policyCLI("test", "-catalog", copyExample(t, `"title": "Issue a refund",`, `"title": "Refund",`))
	require.NoError(t, err, out)

	path := copyExample(t, `"max_amount": {"amount": 500}`, `"max_amount": {"amount": 1000}`)
	out, err = policyCLI("test", "-catalog", path, "-v")
	require.ErrorIs(t, err, errPolicyFailed)
	assert.ErrorContains(t, err, "1 of 7 cases")
	tests := filepath.Join(filepath.Dir(path), "catalog.test.json")
	assert.Contains(t, out, "FAIL "+tests+":24: a refund over the limit is refused, whoever would approve it (decision, reason differs)\n"+
		"  - want deny: reason containing \"over the per-call limit\"\n"+
		"  + got  needs_approval by support-leads (user:dana, user:erin) quorum 1: \"irreversible effect\"\n")
	assert.Contains(t, out, "ok   "+tests+":4: looking up an order runs at once")

	out, err = policyCLI("test", "-catalog", copyExample(t, `"quorum": 2,`, ``), "-tests", "../service/catalog.test.json")
	require.ErrorIs(t, err, errPolicyFailed)
	assert.Contains(t, out, "deleting a customer needs two admins (quorum differs)")
}

// TestPolicyCommandsRefuse: bad use and bad files are errors, never a
// passing run.
func TestPolicyCommandsRefuse(t *testing.T) {
	for _, args := range [][]string{
		{}, {"lint"}, {"test"}, {"test", "-catalog", exampleCatalog, "extra"},
		{"test", "-catalog", exampleCatalog, "-tests", "missing.test.json"},
		{"test", "-catalog", "missing.json"},
		{"diff", exampleCatalog}, {"diff", exampleCatalog, "missing.json"},
	} {
		_, err := policyCLI(args...)
		assert.Error(t, err, "%q", args)
	}
}

// TestPolicyDiff: the command lists what changed and what a new version
// does to approvals in flight.
func TestPolicyDiff(t *testing.T) {
	newer := copyExample(t, `"version": "2026-12-02.1",`, `"version": "2026-12-09.1",`)
	raw, err := os.ReadFile(newer)
	require.NoError(t, err)
	raw = []byte(strings.Replace(string(raw), `"quorum": 2,`, ``, 1))
	require.NoError(t, os.WriteFile(newer, raw, 0o600))
	out, err := policyCLI("diff", exampleCatalog, newer)
	require.NoError(t, err)
	assert.Equal(t, "policy version: 2026-12-02.1 -> 2026-12-09.1\n"+
		"  once 2026-12-09.1 serves, approvals made under 2026-12-02.1 and not yet executed are void: Execute refuses them, and their calls must be proposed again\n"+
		"~ tool delete_customer: /quorum: 2 -> (none)\n", out)
}
