package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutput runs the quickstart and checks every decision line: seed
// 002's outcomes, the digests, and each attack on P1-P3.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	want := []string{
		`read_file     allow`,
		`write_draft   allow`,
		`send_email    needs approval`,
		`issue_refund  deny: over the per-call limit`,
		`run_shell     deny: unknown tool`,
		`keys reordered +[0-9a-f]{64}  same digest`,
		`to finance@exarnple.com +[0-9a-f]{64}  another digest`,
		`q3.csv edited +[0-9a-f]{64}  another digest`,
		`\| == WRITTEN BY THE AGENT: untrusted, not checked ==`,
		`\|   to: "finance@example.com"`,
		`1\. the approved call \(keys reordered\) +execute`,
		`2\. the same approval again +reject: approval already used`,
		`3\. recipient changed after approval +reject: action differs from what was approved`,
		`4\. attachment edited after approval +reject: action differs from what was approved`,
		`5\. used 20 minutes later +reject: approval expired`,
		`6\. digest swapped in the evidence +reject: bad signature`,
		`7\. agent approves its own call +refused: approver must be a human other than the requester`,
		`agent enrolls its own passkey +refused: approver must be a human`,
		`agent's passkey slipped into the store +refused: approver must be a human`,
		`passkey created on the agent's host +reject: credential not enrolled`,
		`answer from the agent's origin +reject: wrong origin`,
		`passkey scoped to the agent's host \(RP ID\) +reject: wrong RP ID`,
		`approval without user verification +reject: user not verified`,
		`resumer reloads an edited checkpoint +naive: sends q3.csv to finance@exarnple.com; gate: sends q3.csv to finance@example.com`,
		`hook rewrites the arguments +naive: sends q3.csv to attacker@example.net; gate: sends q3.csv to finance@example.com`,
		`edited stored history +naive: sends \.\./\.\./etc/passwd to finance@example.com; gate: sends q3.csv to finance@example.com`,
		`assertion replayed on its ticket +reject: already decided`,
		`assertion replayed on another ticket +reject: wrong challenge`,
		`cloned passkey \(counter did not advance\) +reject: signature counter did not advance`,
		`64 concurrent Executes of one approval +1 ran, 63 refused as used`,
		`crash after consume, restart, Recover +ran once, with the same idempotency key`,
	}
	for _, w := range want {
		assert.Regexp(t, regexp.MustCompile(`(?m)^ *`+w), text)
	}
	digests := regexp.MustCompile(`(?m)^  (send_email to finance@example.com|keys reordered) +([0-9a-f]{64})`).FindAllStringSubmatch(text, -1)
	require.Len(t, digests, 2)
	assert.Equal(t, digests[0][2], digests[1][2], "reordered keys give the same digest")
	assert.NotContains(t, text, "error:")
	assert.False(t, strings.Contains(text, "/tmp/"), "no machine paths in the output")
}
