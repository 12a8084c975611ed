package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestOutput runs the quickstart and checks every decision line: the
// reference program's outcomes, the digests, each attack on P1-P3, P6
// and P7, and the dwell time and the rule of two.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{}))
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
		`▌ == WRITTEN BY THE AGENT: untrusted, not checked ==`,
		`▌   to: "finance@example.com"`,
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
		`grant signed with Dana's passkey +issued`,
		`refund 120 to A-17 +approved by the grant, ran`,
		`refund 300 to A-17 +ask Dana \(argument outside the grant bounds at "/amount"\)`,
		`refund 1200 to A-17 +deny: over the per-call limit`,
		`refund 120 to A-18 +ask Dana \(argument differs from the grant at "/order"\)`,
		`refund 120 to A-17, extra argument +ask Dana \(argument not pinned at "/to_account"\)`,
		`refund 100 to A-17 \(second use\) +approved by the grant, ran`,
		`refund 100 to A-17 \(grant used up\) +ask Dana \(no uses left\)`,
		`agent proposes a grant of its own +deny: unknown tool`,
		`refund 90 to Z-99, extra argument +naive grant \(tool only\): runs; gate: ask Dana \(argument differs from the grant at "/order"\)`,
		`1,000 requests from one session, naive +1000 wait for Dana`,
		`1,000 requests from one session +5 wait for Dana, 995 denied`,
		`asks again each time Dana approves +10 reach Dana, then rate limited, retry after [0-9]+m[0-9]+s`,
		`Dana denies 3 in a row; a 4th request +locked out, retry after 15m0s`,
		`the 4th through another gate, same store +locked out, retry after 15m0s`,
		`15 minutes later +pending`,
		`Dana approves 1 s after the card appears +refused: too soon, read it first`,
		`and again, 4 s after +approved`,
		`refund of 120 EUR: Dana approves +pending, 1 of 2`,
		`the agent runs it now +refused: not approved`,
		`Dana approves again +refused: the same person twice`,
		`Erin approves; the agent runs it +approved, ran 1 time`,
		`receipts for a third party \(verify quorum\) +2, one per approver, one challenge`,
	}
	for _, w := range want {
		assert.Regexp(t, regexp.MustCompile(`(?m)^ *`+w), text)
	}
	digests := regexp.MustCompile(`(?m)^  (send_email to finance@example.com|keys reordered) +([0-9a-f]{64})`).FindAllStringSubmatch(text, -1)
	require.Len(t, digests, 2)
	assert.Equal(t, digests[0][2], digests[1][2], "reordered keys give the same digest")
	assert.NotContains(t, text, "error:")
	assert.False(t, strings.Contains(text, "/tmp/"), "no machine paths in the output")
	assert.NotContains(t, text, "approver public key:", "printed only with -receipt")
}

// TestReceiptFlag writes the receipt of the approved send_email call and
// verifies it with nothing but the printed public key, the relying party
// and receipt.Verify.
func TestReceiptFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "receipt.json")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{receipt: file}))
	m := regexp.MustCompile(`(?m)^approver public key: ([A-Za-z0-9_-]+)$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the key line")
	cose, err := base64.RawURLEncoding.DecodeString(m[1])
	require.NoError(t, err)
	key, err := receipt.ParseCOSEKey(cose)
	require.NoError(t, err)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	r, err := receipt.Parse(data)
	require.NoError(t, err)
	res, err := receipt.Verify(r, key, receipt.Policy{RPID: stepuptest.RP().ID, Origins: []string{stepuptest.RP().Origin}})
	require.NoError(t, err)
	require.NoError(t, res.Err())
	assert.True(t, res.Valid)
	assert.Equal(t, "send_email", res.Effect.Tool)
	assert.Contains(t, string(res.Effect.Args), "finance@example.com")

	data[bytes.Index(data, []byte("finance@example.com"))] = 'F'
	if r, err := receipt.Parse(data); err == nil {
		res, err := receipt.Verify(r, key, receipt.Policy{RPID: stepuptest.RP().ID, Origins: []string{stepuptest.RP().Origin}})
		assert.True(t, err != nil || !res.Valid, "an edited receipt does not verify")
	}
}

// TestReceiptFlagPrintsAWorkingVerifyCommand: with -receipt the
// quickstart writes the approver's key to a file beside the receipt and
// prints the whole verify command; run as printed, from the repository's
// root, it accepts the receipt, and it refuses the receipt once edited.
func TestReceiptFlagPrintsAWorkingVerifyCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/verify")
	}
	file := filepath.Join(t.TempDir(), "r.json")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{receipt: file}))
	m := regexp.MustCompile(`(?m)^verify: (go run \./examples/verify receipt .*)$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the verify command line:\n%s", out.String())
	args := strings.Fields(m[1])
	require.Equal(t, []string{"go", "run", "./examples/verify", "receipt", file, "--key", keyFileFor(file),
		"--rp-id", stepuptest.RP().ID, "--origin", stepuptest.RP().Origin}, args)
	key, err := os.ReadFile(keyFileFor(file))
	require.NoError(t, err)
	assert.Contains(t, out.String(), "approver public key: "+strings.TrimSpace(string(key)))

	verify := func() ([]byte, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = filepath.Join("..", "..")
		return cmd.CombinedOutput()
	}
	got, err := verify()
	require.NoError(t, err, "the printed command, run as printed:\n%s", got)

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data[bytes.Index(data, []byte("finance@example.com"))] = 'F'
	require.NoError(t, os.WriteFile(file, data, 0o644))
	got, err = verify()
	assert.Error(t, err, "an edited receipt is refused:\n%s", got)
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"r.json": "r.json", "dir/r.json": "dir/r.json", "my r.json": "'my r.json'", "it's": `'it'\''s'`, "": "''",
		"https://approve.example.com": "https://approve.example.com", "$(rm -rf /)": "'$(rm -rf /)'",
	} {
		assert.Equal(t, want, shellQuote(in), in)
	}
}
