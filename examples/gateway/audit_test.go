package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/remote"
)

// verifyCLI builds the verify command once for the test.
func verifyCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "verify")
	out, err := exec.Command("go", "build", "-o", bin, "../verify").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// TestAuditExportWithCheckpoint: while a replica keeps deciding, the
// audit export of its store writes the chain up to a head the gate signed,
// and the signed checkpoint beside it; the verify command accepts the pair
// as printed, from the start of the chain through the checkpoint, and
// refuses the chain with its first record cut, or with another gate's key.
func TestAuditExportWithCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the verify command")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	key := filepath.Join(dir, "checkpoint.pem")
	g := startGateway(t, options{db: db, files: dir, tokens: filepath.Join(dir, "tokens.json"), checkpointKey: key})
	assert.Contains(t, g.printed(), "checkpoint key: "+key+" (publish "+key+".pub;")
	c, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	for range 5 {
		tk, err := c.Propose(ctx, readCall("q3.csv"))
		require.NoError(t, err)
		_, err = c.Execute(ctx, tk.ID)
		require.NoError(t, err)
	}
	busy, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { // the replica keeps appending to the chain meanwhile
		for busy.Err() == nil {
			_, _ = c.Propose(busy, readCall("q3.csv"))
		}
	})
	file := filepath.Join(dir, "audit.jsonl")
	var out bytes.Buffer
	err = cli(ctx, []string{"-db", db, "-audit", file, "-checkpoint-key", key}, &out, &out)
	stop()
	wg.Wait()
	require.NoError(t, err, out.String())
	assert.Regexp(t, `audit chain: \d+ records written to `, out.String())

	bin := verifyCLI(t)
	printed := regexp.MustCompile(`(?m)^verify: go run ./examples/verify (.*)$`).FindStringSubmatch(out.String())
	require.Len(t, printed, 2, out.String())
	cmd := exec.Command(bin, strings.Fields(printed[1])...)
	res, err := cmd.CombinedOutput()
	require.NoError(t, err, string(res))
	assert.Regexp(t, `^valid: \d+ records, seq 1-\d+ from the start of the chain, through the signed checkpoint at seq \d+`, string(res))

	// The chain with its first record cut does not verify against it.
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, b[bytes.IndexByte(b, '\n')+1:], 0o600))
	res, err = exec.Command(bin, "audit", cut, "--checkpoint", file+".checkpoint.json", "--gate-key", key+".pub").CombinedOutput()
	assert.Error(t, err, "a cut chain: %s", res)
	// Nor with another gate's key.
	_, otherPub, err := checkpointKey(filepath.Join(dir, "other.pem"))
	require.NoError(t, err)
	res, err = exec.Command(bin, "audit", file, "--checkpoint", file+".checkpoint.json", "--gate-key", otherPub).CombinedOutput()
	assert.Error(t, err, "another key: %s", res)

	assert.Error(t, cli(ctx, []string{"-db", db, "-audit", file}, &out, &out), "an export never overwrites a file")
	assert.Error(t, cli(ctx, []string{"-db", filepath.Join(dir, "none.db"), "-audit", filepath.Join(dir, "x.jsonl")}, &out, &out),
		"nor exports a database that does not exist")
}
