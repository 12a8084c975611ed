package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// sparse returns the name of a file of size bytes that takes no room on
// disk, or skips the test where the file system cannot make one.
func sparse(t *testing.T, name string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse file of %d bytes: %v", size, err)
	}
	return p
}

// TestFilesOverTheirLimitAreRefusedUnread: every file a command reads
// whole is checked against its limit before it is read: one byte over, the
// command exits 2 with an error that names the file and the limit (and
// reads nothing of it: the files here are sparse, as large as they say and
// empty on disk). At the limit, a file is read and judged for what it
// holds.
func TestFilesOverTheirLimitAreRefusedUnread(t *testing.T) {
	f := newFixture(t, receipttest.EdDSA)
	q := filepath.Join(t.TempDir(), "quorum.json")
	doc, err := os.ReadFile(f.receipt)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(q, []byte(`{"format":"asu.quorum.v1","needed":1,"receipts":[`+string(doc)+`]}`), 0o600))
	cp, gateKey := checkpointFiles(t)
	chain := writeRecords(t, nil)
	commands := []struct {
		name  string
		limit int64
		args  func(file string) []string
	}{
		{"receipt FILE", maxReceiptFile, func(file string) []string { return receiptArgs(fixture{receipt: file}, f.cose) }},
		{"receipt --key", maxKeyFile, func(file string) []string { return receiptArgs(f, file) }},
		{"quorum FILE", maxQuorumFile, func(file string) []string {
			return []string{"quorum", file, "--key", "user:dana=" + f.cose, "--k", "1", "--rp-id", receipttest.RPID, "--origin", receipttest.Origin}
		}},
		{"quorum --key", maxKeyFile, func(file string) []string {
			return []string{"quorum", q, "--key", "user:dana=" + file, "--k", "1", "--rp-id", receipttest.RPID, "--origin", receipttest.Origin}
		}},
		{"audit --checkpoint", maxCheckpointFile, func(file string) []string {
			return []string{"audit", chain, "--checkpoint", file, "--gate-key", gateKey}
		}},
		{"audit --gate-key", maxKeyFile, func(file string) []string {
			return []string{"audit", chain, "--checkpoint", cp, "--gate-key", file}
		}},
		{"staffing --audit", maxStaffingAudit, func(file string) []string { return []string{"staffing", "--audit", file} }},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			over := sparse(t, "over\x1b.file", c.limit+1)
			code, out, errOut := runCLI(approvedAt, c.args(over)...)
			assert.Equal(t, 2, code, "%s%s", out, errOut)
			assert.Contains(t, errOut, printable(quoted(over)), "names the file")
			assert.Contains(t, errOut, fmt.Sprintf("over %d bytes", c.limit), "names the limit")
			if c.limit > 1<<20 {
				return // not read into memory here: the refusal is what is tested
			}
			at := sparse(t, "at.file", c.limit)
			_, _, errOut = runCLI(approvedAt, c.args(at)...)
			assert.NotContains(t, errOut, "bytes, the limit", "a file at its limit is read")
		})
	}
}

// checkpointFiles writes a checkpoint the gate signed and the gate's key.
func checkpointFiles(t *testing.T) (cp, key string) {
	gate := audittest.GateKey(1)
	chain := audittest.Chain(3, approvedAt)
	return writeCheckpoint(t, audittest.SignedCheckpoint(gate, chain[1])), writeGateKey(t, gate)
}

// TestLimitedReaderStopsPastLimit: a stream with no size (a pipe) is cut
// one byte past its limit with the limit's error; one at its limit reads
// to its end.
func TestLimitedReaderStopsPastLimit(t *testing.T) {
	over := errors.New("over")
	for _, n := range []int{0, 1, 7, 4096, 100000} {
		for _, size := range []int{n, n + 1, 3*n + 5} {
			src := io.MultiReader(bytes.NewReader(make([]byte, size/2)), strings.NewReader(strings.Repeat("x", size-size/2)))
			got, err := io.ReadAll(&limitedReader{r: src, left: int64(n), over: over})
			if size <= n {
				assert.NoError(t, err, "size %d, limit %d", size, n)
				assert.Len(t, got, size)
			} else {
				assert.ErrorIs(t, err, over, "size %d, limit %d", size, n)
				assert.LessOrEqual(t, len(got), n+1)
			}
		}
	}
}
