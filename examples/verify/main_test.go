package main

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

var (
	approvedAt = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	expiresAt  = approvedAt.Add(15 * time.Minute)
)

// fixture writes a receipt, its COSE key file and its PEM key file.
type fixture struct {
	dir, receipt, cose, pem string
	signer                  *receipttest.Signer
}

func newFixture(t *testing.T, alg receipttest.Algorithm, tweaks ...receipttest.Tweak) fixture {
	t.Helper()
	s, err := receipttest.New(alg, "user:dana")
	require.NoError(t, err)
	e := receipttest.Effect("finance@example.com")
	r, err := s.Sign(e, receipttest.Card(e), expiresAt, approvedAt, tweaks...)
	require.NoError(t, err)
	return writeFixture(t, s, r)
}

func writeFixture(t *testing.T, s *receipttest.Signer, r *receipt.Receipt) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{dir: dir, receipt: filepath.Join(dir, "receipt.json"), cose: filepath.Join(dir, "key.cose"), pem: filepath.Join(dir, "key.pem"), signer: s}
	doc, err := r.Marshal()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.receipt, doc, 0o600))
	require.NoError(t, os.WriteFile(f.cose, []byte(base64.RawURLEncoding.EncodeToString(s.COSEKey())+"\n"), 0o600))
	der, err := x509.MarshalPKIXPublicKey(s.PublicKey())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.pem, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))
	return f
}

func runCLI(now time.Time, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut, func() time.Time { return now })
	return code, out.String(), errOut.String()
}

func receiptArgs(f fixture, key string, extra ...string) []string {
	return append([]string{"receipt", f.receipt, "--key", key, "--rp-id", receipttest.RPID, "--origin", receipttest.Origin}, extra...)
}

func TestReceiptValid(t *testing.T) {
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			f := newFixture(t, alg)
			for _, key := range []string{f.cose, f.pem} {
				code, out, errOut := runCLI(approvedAt, receiptArgs(f, key)...)
				assert.Equal(t, 0, code, errOut)
				assert.Empty(t, errOut)
				assert.Equal(t, 1, strings.Count(out, "\n"), "one line")
				assert.Contains(t, out, `valid: "send_email" approved by "user:dana" with `+alg.String())
				assert.Contains(t, out, "open until 2026-11-02T09:15:00Z")
			}
		})
	}
}

func TestReceiptExpiryIsReportedNotJudged(t *testing.T) {
	f := newFixture(t, receipttest.EdDSA)
	code, out, _ := runCLI(expiresAt.Add(time.Hour), receiptArgs(f, f.cose)...)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "closed at 2026-11-02T09:15:00Z")
}

func TestReceiptInvalid(t *testing.T) {
	other, err := receipttest.New(receipttest.ES256, "user:mallory")
	require.NoError(t, err)
	otherKey := writeFixture(t, other, func() *receipt.Receipt {
		e := receipttest.Effect("x@example.com")
		r, err := other.Sign(e, receipttest.Card(e), expiresAt, approvedAt)
		require.NoError(t, err)
		return r
	}())
	tests := []struct {
		name   string
		f      func(t *testing.T) fixture
		key    func(f fixture) string
		extra  []string
		reason string
	}{
		{"wrong key", func(t *testing.T) fixture { return newFixture(t, receipttest.ES256) }, func(fixture) string { return otherKey.cose }, nil, "public_key check failed"},
		{"wrong origin", func(t *testing.T) fixture {
			return newFixture(t, receipttest.ES256, receipttest.WithOrigin("https://evil.test"))
		}, nil, nil, "origin check failed"},
		{"no user verification", func(t *testing.T) fixture { return newFixture(t, receipttest.ES256, receipttest.WithFlags(1)) }, nil, nil, "user_verified check failed"},
		{"other user pinned", func(t *testing.T) fixture { return newFixture(t, receipttest.EdDSA) }, nil, []string{"--user", "user:erin"}, "public_key check failed"},
		{"edited effect", func(t *testing.T) fixture {
			f := newFixture(t, receipttest.ES256)
			doc, err := os.ReadFile(f.receipt)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f.receipt, bytes.Replace(doc, []byte("finance@example.com"), []byte("finance@exarnple.com"), 1), 0o600))
			return f
		}, nil, nil, "digest check failed"},
		{"not a receipt", func(t *testing.T) fixture {
			f := newFixture(t, receipttest.ES256)
			require.NoError(t, os.WriteFile(f.receipt, []byte(`{"format":"asu.receipt.v1"}`), 0o600))
			return f
		}, nil, nil, "receipt: malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f(t)
			key := f.cose
			if tt.key != nil {
				key = tt.key(f)
			}
			code, out, _ := runCLI(approvedAt, receiptArgs(f, key, tt.extra...)...)
			assert.Equal(t, 1, code)
			assert.Equal(t, 1, strings.Count(out, "\n"), "one line: %s", out)
			assert.True(t, strings.HasPrefix(out, "invalid: "), out)
			assert.Contains(t, out, tt.reason)
		})
	}
}

func TestReceiptJSON(t *testing.T) {
	f := newFixture(t, receipttest.ES256, receipttest.WithFlags(1))
	code, out, _ := runCLI(approvedAt, receiptArgs(f, f.cose, "--json")...)
	assert.Equal(t, 1, code)
	var rep struct {
		Valid  bool   `json:"valid"`
		Reason string `json:"reason"`
		Result struct {
			Checks []struct{ Name, Outcome string }
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Valid)
	assert.Contains(t, rep.Reason, "user_verified")
	require.Len(t, rep.Result.Checks, len(receipt.CheckNames()))
	assert.Equal(t, "user_verified", rep.Result.Checks[9].Name)
	assert.Equal(t, "fail", rep.Result.Checks[9].Outcome)
	assert.Equal(t, "pass", rep.Result.Checks[11].Outcome, "signature")
}

func TestUsageErrors(t *testing.T) {
	f := newFixture(t, receipttest.EdDSA)
	garbage := filepath.Join(f.dir, "garbage.key")
	require.NoError(t, os.WriteFile(garbage, []byte("not a key!"), 0o600))
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"sign"}},
		{"no file", []string{"receipt", "--key", f.cose, "--rp-id", "x", "--origin", "y"}},
		{"two files", append(receiptArgs(f, f.cose), "other.json")},
		{"no key", []string{"receipt", f.receipt, "--rp-id", "x", "--origin", "y"}},
		{"no origin", []string{"receipt", f.receipt, "--key", f.cose, "--rp-id", "x"}},
		{"missing key file", receiptArgs(f, filepath.Join(f.dir, "nope"))},
		{"garbage key file", receiptArgs(f, garbage)},
		{"missing receipt", []string{"receipt", filepath.Join(f.dir, "nope.json"), "--key", f.cose, "--rp-id", "x", "--origin", "y"}},
		{"unknown flag", append(receiptArgs(f, f.cose), "--sloppy")},
		{"bad anchor", []string{"audit", f.receipt, "--anchor", "xyz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(approvedAt, tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.NotEmpty(t, errOut)
		})
	}
}

func writeChain(t *testing.T, records []audit.Record) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, audit.WriteChain(&buf, records))
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

func TestAudit(t *testing.T) {
	chain := audittest.Chain(30, approvedAt)
	head := chain[29].Hash.String()
	code, out, _ := runCLI(approvedAt, "audit", writeChain(t, chain))
	assert.Equal(t, 0, code)
	assert.Equal(t, "valid: 30 records, seq 1-30 from the start of the chain; head "+head+"\n", out)

	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain), "--head", head, "--metrics")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "approval figures (all, then by effect class;")
	assert.Contains(t, out, "external")

	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain[10:]))
	assert.Equal(t, 1, code, "a chain whose first records are gone is not valid on its own")
	assert.Contains(t, out, "does not start at the first record")
	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain[10:]), "--anchor", chain[9].Hash.String())
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "linked to the anchor")
	code, _, _ = runCLI(approvedAt, "audit", writeChain(t, chain[10:]), "--anchor", chain[8].Hash.String())
	assert.Equal(t, 1, code)

	// The last record removed: only the expected head exposes it.
	code, out, _ = runCLI(approvedAt, "audit", writeChain(t, chain[:29]), "--head", head)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "expected head")

	edited := append([]audit.Record(nil), chain...)
	edited[12].Decision = audit.DecisionApproved
	file := writeChain(t, edited)
	code, out, _ = runCLI(approvedAt, "audit", file)
	assert.Equal(t, 1, code)
	assert.Equal(t, "invalid: "+file+": audit: chain broken at line 13 (seq 13): record hash does not match its content\n", out)

	code, out, _ = runCLI(approvedAt, "audit", file, "--json")
	assert.Equal(t, 1, code)
	var rep struct {
		File  string `json:"file"`
		Valid bool   `json:"valid"`
		Line  int    `json:"line"`
		Seq   int64  `json:"seq"`
		Break struct {
			Index int   `json:"index"`
			Seq   int64 `json:"seq"`
		} `json:"break"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Valid)
	assert.Equal(t, file, rep.File)
	assert.Equal(t, 13, rep.Line)
	assert.Equal(t, int64(13), rep.Seq)
	assert.Equal(t, 12, rep.Break.Index)
	assert.Equal(t, int64(13), rep.Break.Seq)

	var first bytes.Buffer
	require.NoError(t, audit.WriteChain(&first, chain[:1]))
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, append(first.Bytes(), "not json\n"...), 0o600))
	code, out, _ = runCLI(approvedAt, "audit", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "line 2")
}

// TestAuditProgress: a long chain's verification says how far it got on
// stderr, every N records, and nothing of it reaches stdout.
func TestAuditProgress(t *testing.T) {
	file := writeChain(t, audittest.Chain(35, approvedAt))
	code, out, errOut := runCLI(approvedAt, "audit", file, "--progress", "10")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	require.Len(t, lines, 3, errOut)
	assert.True(t, strings.HasPrefix(lines[0], "verify audit: 10 records verified, at seq 10 ("), lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "verify audit: 30 records verified, at seq 30 ("), lines[2])
	assert.NotContains(t, out, "records verified")

	_, _, errOut = runCLI(approvedAt, "audit", file, "--progress", "0")
	assert.Empty(t, errOut)
	_, _, errOut = runCLI(approvedAt, "audit", file)
	assert.Empty(t, errOut, "a short chain needs no progress line")
}

func TestReceiptPinnedIdentity(t *testing.T) {
	f := newFixture(t, receipttest.ES256)
	doc, err := os.ReadFile(f.receipt)
	require.NoError(t, err)
	r, err := receipt.Parse(doc)
	require.NoError(t, err)
	credID := base64.RawURLEncoding.EncodeToString(r.Approver.CredentialID)
	other := base64.RawURLEncoding.EncodeToString([]byte("another credential"))

	code, out, _ := runCLI(approvedAt, receiptArgs(f, f.cose, "--user", "user:dana", "--credential-id", credID)...)
	assert.Equal(t, 0, code, out)
	code, out, _ = runCLI(approvedAt, receiptArgs(f, f.cose, "--credential-id", other)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "pinned identity")
	code, _, errOut := runCLI(approvedAt, receiptArgs(f, f.cose, "--credential-id", "not base64!")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "credential-id")
}
