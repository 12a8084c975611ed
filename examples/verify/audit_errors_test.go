package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
)

// writeExport writes the lines of an export, each ending in a newline.
func writeExport(t *testing.T, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600))
	return p
}

func exportLines(t *testing.T, records []audit.Record) []string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, audit.WriteChain(&buf, records))
	return strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// TestAuditErrorsNameFileAndLine: whatever is wrong with a line, the one
// line of text and the --json report name the file and the same line,
// from 1, and the seq when the record was read: a chain break, a line
// that is not a record, a member spelled in another case that hides an
// edit, a chain that ends before its checkpoint.
func TestAuditErrorsNameFileAndLine(t *testing.T) {
	gate := audittest.GateKey(1)
	key := writeGateKey(t, gate)
	chain := audittest.Chain(12, approvedAt)
	at12 := writeCheckpoint(t, audittest.SignedCheckpoint(gate, chain[11]))
	for k := 1; k < 11; k++ { // the 0-based line spoiled
		good := exportLines(t, chain)
		type fault struct {
			name  string
			lines []string
			args  []string
			line  int
			seq   int64 // 0: not read
			says  string
		}
		var faults []fault
		dup := append(append(append([]string(nil), good[:k+1]...), good[k]), good[k+1:]...)
		faults = append(faults, fault{"repeated line", dup, nil, k + 2, int64(k + 1), "chain broken at line"})
		bad := append(append(append([]string(nil), good[:k]...), "not json\n"), good[k:]...)
		faults = append(faults, fault{"not a record", bad, nil, k + 1, 0, "malformed export: line"})
		twin := append([]string(nil), good...)
		twin[k] = strings.Replace(twin[k], `"decision":"`, `"decision":"denied","Decision":"`, 1)
		faults = append(faults, fault{"case twin", twin, nil, k + 1, 0, "spelled unlike field decision"})
		faults = append(faults, fault{"ends before the checkpoint", good[:k], []string{"--checkpoint", at12, "--gate-key", key}, k, int64(k), "before the checkpoint at seq 12"})
		for _, f := range faults {
			name := fmt.Sprintf("%s at line %d", f.name, f.line)
			file := writeExport(t, f.lines)
			code, out, _ := runCLI(approvedAt, append([]string{"audit", file}, f.args...)...)
			assert.Equal(t, 1, code, name)
			assert.True(t, strings.HasPrefix(out, "invalid: "+file+": audit: "), "%s: %s", name, out)
			assert.Contains(t, out, fmt.Sprintf("line %d", f.line), name)
			assert.Contains(t, out, f.says, name)
			if f.seq > 0 {
				assert.Contains(t, out, fmt.Sprintf("seq %d", f.seq), name)
			}

			code, out, _ = runCLI(approvedAt, append([]string{"audit", file, "--json"}, f.args...)...)
			assert.Equal(t, 1, code, name)
			var rep struct {
				File   string `json:"file"`
				Reason string `json:"reason"`
				Line   int    `json:"line"`
				Seq    *int64 `json:"seq"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rep), name)
			assert.Equal(t, file, rep.File, name)
			assert.Equal(t, f.line, rep.Line, name)
			assert.Contains(t, rep.Reason, fmt.Sprintf("line %d", f.line), name)
			if f.seq > 0 && assert.NotNil(t, rep.Seq, name) {
				assert.Equal(t, f.seq, *rep.Seq, name)
			} else if f.seq == 0 {
				assert.Nil(t, rep.Seq, name)
			}
		}
	}
}

// TestAuditEmptyExport: an empty file is a chain with no records. On its
// own it is valid and says so in words that it verified nothing; against
// a checkpoint, or an expected head, it fails, as a file cut before them
// does.
func TestAuditEmptyExport(t *testing.T) {
	gate := audittest.GateKey(1)
	chain := audittest.Chain(8, approvedAt)
	key := writeGateKey(t, gate)
	empty := writeExport(t, nil)

	code, out, _ := runCLI(approvedAt, "audit", empty)
	assert.Equal(t, 0, code)
	assert.Equal(t, "valid: no records (the file is empty: nothing to verify; --head or --checkpoint would refuse it)\n", out)

	for _, at := range []int{1, 5, 8} {
		cp := writeCheckpoint(t, audittest.SignedCheckpoint(gate, chain[at-1]))
		code, out, _ = runCLI(approvedAt, "audit", empty, "--checkpoint", cp, "--gate-key", key)
		assert.Equal(t, 1, code, out)
		assert.Equal(t, fmt.Sprintf("invalid: %s: audit: checkpoint does not verify: the export holds no records, so it neither passes through nor continues the checkpoint at seq %d\n", empty, at), out)
		code, _, _ = runCLI(approvedAt, "audit", writeChain(t, chain[:at-1]), "--checkpoint", cp, "--gate-key", key)
		assert.Equal(t, 1, code, "cut before the checkpoint at seq %d", at)
	}
	code, out, _ = runCLI(approvedAt, "audit", empty, "--head", chain[7].Hash.String())
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "no records, but a head was expected")
}
