package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// node returns the path of node, or skips the test.
func node(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("node")
	if err != nil {
		t.Skip("interop: needs Node.js on PATH and `npm ci` in receipt/interop")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@simplewebauthn", "server", "package.json")); err != nil {
		t.Skip("interop: needs Node.js on PATH and `npm ci` in receipt/interop")
	}
	return path
}

// verdict is one line of verify.mjs output.
type verdict struct {
	File     string `json:"file"`
	Verified bool   `json:"verified"`
	Error    string `json:"error"`
}

// nodeVerify writes receipts to files and has verify.mjs check them all
// against the COSE key, returning its verdicts by receipt index.
func nodeVerify(t *testing.T, nodePath string, cose []byte, p receipt.Policy, receipts []*receipt.Receipt) []verdict {
	t.Helper()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.cose")
	require.NoError(t, os.WriteFile(keyFile, []byte(base64.RawURLEncoding.EncodeToString(cose)), 0o600))
	args := []string{"verify.mjs", "--key", keyFile, "--rp-id", p.RPID, "--origin", p.Origins[0]}
	for i, r := range receipts {
		doc, err := r.Marshal()
		require.NoError(t, err)
		f := filepath.Join(dir, strconv.Itoa(i)+".json")
		require.NoError(t, os.WriteFile(f, doc, 0o600))
		args = append(args, f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodePath, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, stderr.String())
	}
	require.NotEqual(t, 2, cmd.ProcessState.ExitCode(), stderr.String())
	var got []verdict
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var v verdict
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		got = append(got, v)
	}
	require.Len(t, got, len(receipts), stderr.String())
	allOK := true
	for _, v := range got {
		allOK = allOK && v.Verified
	}
	assert.Equal(t, allOK, cmd.ProcessState.ExitCode() == 0, "exit status 0 only when every receipt verified")
	return got
}

// named is a receipt with a name for messages and whether it should verify.
type named struct {
	name  string
	r     *receipt.Receipt
	valid bool
}

// agree runs both verifiers over cases and requires them to agree with
// each other and with the expectation.
func agree(t *testing.T, nodePath string, key []byte, p receipt.Policy, cases []named) {
	t.Helper()
	trusted, err := receipt.ParseCOSEKey(key)
	require.NoError(t, err)
	rs := make([]*receipt.Receipt, len(cases))
	for i, c := range cases {
		rs[i] = c.r
	}
	verdicts := nodeVerify(t, nodePath, key, p, rs)
	for i, c := range cases {
		_, goErr := receipt.Verify(c.r, trusted, p)
		assert.Equalf(t, c.valid, goErr == nil, "%s: Go verifier: %v", c.name, goErr)
		assert.Equalf(t, c.valid, verdicts[i].Verified, "%s: simplewebauthn: %s", c.name, verdicts[i].Error)
	}
}

func TestSimpleWebAuthnVerifiesSignerReceipts(t *testing.T) {
	nodePath := node(t)
	approvedAt := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, err := receipttest.New(alg, "user:dana")
			require.NoError(t, err)
			e := receipttest.Effect("finance@example.com")
			sign := func(tweaks ...receipttest.Tweak) *receipt.Receipt {
				r, err := s.Sign(e, receipttest.Card(e), approvedAt.Add(15*time.Minute), approvedAt, tweaks...)
				require.NoError(t, err)
				return r
			}
			swapped := sign()
			other := receipttest.Effect("finance@exarnple.com")
			c, err := other.Canonical()
			require.NoError(t, err)
			swapped.Effect, swapped.Digest = c, canon.Sum(c)

			late := sign()
			late.ExpiresAt += 3600

			mallory, err := receipttest.New(alg, "user:mallory")
			require.NoError(t, err)
			forged, err := mallory.Sign(e, receipttest.Card(e), approvedAt.Add(15*time.Minute), approvedAt)
			require.NoError(t, err)
			forged.Approver.PublicKey = s.COSEKey()

			agree(t, nodePath, s.COSEKey(), s.Policy(), []named{
				{"valid", sign(), true},
				{"valid with sign counter", sign(receipttest.WithSignCount(41)), true},
				{"effect swapped, digest updated", swapped, false},
				{"expiry extended", late, false},
				{"no user verification", sign(receipttest.WithFlags(0x01)), false},
				{"other origin", sign(receipttest.WithOrigin("https://evil.test")), false},
				{"other RP ID", sign(receipttest.WithRPID("example.com")), false},
				{"signed by another key", forged, false},
			})
		})
	}
}

func TestSimpleWebAuthnVerifiesGateReceipts(t *testing.T) {
	nodePath := node(t)
	ctx := context.Background()
	h := stepuptest.NewGate(t, nil)
	lee := h.Enroll(t, "user:lee", stepuptest.WithAlgorithm(stepuptest.EdDSA))
	p := receipt.Policy{RPID: stepuptest.RP().ID, Origins: []string{stepuptest.RP().Origin}}

	for _, tc := range []struct {
		name, user string // only the ticket's user approves it
		a          *stepuptest.Authenticator
	}{
		{"ES256 passkey", stepuptest.Approver, h.Authenticator},
		{"Ed25519 passkey", "user:lee", lee},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := h.Gate.Propose(ctx, stepup.Call{
				Tool: "send_email",
				Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary"}`),
				Task: "t-42", Step: "s-" + tc.name, Session: "sess-" + tc.name,
				Principal: canon.Principal{User: tc.user, Agent: "agent:reports"},
			})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status)
			_, err = stepuptest.Approve(ctx, h.Gate.Desk(), tc.a, tk.ID)
			require.NoError(t, err)
			r, err := h.Gate.Desk().Receipt(ctx, tk.ID)
			require.NoError(t, err)

			ids := tc.a.CredentialIDs()
			require.Len(t, ids, 1)
			key := tc.a.PublicKey(ids[0]) // out of band: from the authenticator, not the receipt

			edited, err := receipt.Parse(mustMarshal(t, r))
			require.NoError(t, err)
			edited.Card = bytes.Replace(edited.Card, []byte("finance@example.com"), []byte("finance@exarnple.com"), 1)
			require.NotEqual(t, r.Card, edited.Card, "the card shows the recipient")
			edited.CardHash, err = receipt.CardHash(edited.Card)
			require.NoError(t, err)

			agree(t, nodePath, key, p, []named{
				{"gate receipt", r, true},
				{"card swapped, hash updated", edited, false},
			})
		})
	}
}

func mustMarshal(t *testing.T, r *receipt.Receipt) []byte {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	return b
}
