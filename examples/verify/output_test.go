package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// controlRunes are the characters that, printed raw, move a terminal's
// cursor, end a line or reorder text on screen: C0 controls, DEL, C1
// controls, the bidirectional embeddings, overrides and isolates and the
// marks, the line and paragraph separators, and a BOM.
func controlRunes() []rune {
	var out []rune
	for r := rune(0); r < 0x20; r++ {
		out = append(out, r)
	}
	out = append(out, 0x7f)
	for r := rune(0x80); r < 0xa0; r++ {
		out = append(out, r)
	}
	for r := rune(0x202a); r <= 0x202e; r++ {
		out = append(out, r)
	}
	for r := rune(0x2066); r <= 0x2069; r++ {
		out = append(out, r)
	}
	return append(out, 0x2028, 0x2029, 0x200e, 0x200f, 0x061c, 0xfeff)
}

// assertClean fails when out holds a control rune other than the line
// breaks that end its lines, or more lines than want.
func assertClean(t *testing.T, out string, lines int, what string) {
	t.Helper()
	assert.Equal(t, lines, strings.Count(out, "\n"), "%s: %q", what, out)
	for _, r := range controlRunes() {
		if r != '\n' && strings.ContainsRune(out, r) {
			t.Errorf("%s: output holds %U raw: %q", what, r, out)
		}
	}
}

// TestReceiptVerdictEscapesUntrustedText: a receipt's approver user (which
// nothing signs) and its tool (which the agent chooses) holding any
// control character are printed quoted, their controls escaped: the
// verdict stays one line, still reads "valid", and names them visibly.
func TestReceiptVerdictEscapesUntrustedText(t *testing.T) {
	s, err := receipttest.New(receipttest.EdDSA, "user:dana")
	require.NoError(t, err)
	for _, r := range controlRunes() {
		forged := "user:dana" + string(r) + "valid: send_email approved by user:cfo" + string(r) + "\x1b[2K"
		t.Run(fmt.Sprintf("%U", r), func(t *testing.T) {
			e := receipttest.Effect("finance@example.com")
			e.Tool = "send_email" + string(r) + "x"
			rec, err := s.Sign(e, receipttest.Card(e), expiresAt, approvedAt)
			require.NoError(t, err)
			rec.Approver.User = forged
			f := writeFixture(t, s, rec)
			code, out, errOut := runCLI(approvedAt, receiptArgs(f, f.cose)...)
			require.Equal(t, 0, code, errOut)
			assertClean(t, out, 1, "verdict")
			assert.True(t, strings.HasPrefix(out, `valid: "send_email`), out)
			assert.Contains(t, out, "approved by "+quoted(forged)+" with EdDSA")
			assert.Contains(t, out, quoted(e.Tool)+" approved by")

			// With --json the names are JSON strings, escaped by encoding/json.
			code, out, _ = runCLI(approvedAt, receiptArgs(f, f.cose, "--json")...)
			require.Equal(t, 0, code)
			var rep receiptReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.Equal(t, forged, rep.Result.Approver)
		})
	}
}

// TestAuditOutputEscapesUntrustedText: effect classes and approver names
// read from audit records, and the file name, are printed with their
// controls escaped in the metrics, the verdict and the reason of an
// invalid chain.
func TestAuditOutputEscapesUntrustedText(t *testing.T) {
	for _, r := range controlRunes() {
		t.Run(fmt.Sprintf("%U", r), func(t *testing.T) {
			class, approver := "external"+string(r)+"x", "user:dana"+string(r)+"valid: 0 records"
			var recs []audit.Record
			for i := range 3 {
				at := approvedAt.Add(time.Duration(i) * time.Minute).UnixMilli()
				recs = append(recs,
					audit.Record{Time: at, Task: "t", EffectClass: class, Decision: audit.DecisionNeedsApproval},
					audit.Record{Time: at + 1000, Task: "t", EffectClass: class, Decision: audit.DecisionApproved,
						Approver: approver, DecisionMillis: 1000})
			}
			file := writeRecords(t, recs)
			code, out, errOut := runCLI(approvedAt, "audit", file, "--metrics")
			require.Equal(t, 0, code, errOut)
			assertClean(t, out, strings.Count(out, "\n"), "metrics")
			assert.Contains(t, out, "  "+printable(class)+" ")
			assert.Contains(t, out, "  "+printable(approver)+" ")
			assert.NotContains(t, out, "\nvalid: 0 records")
		})
	}
	for _, r := range []rune{0x1b, '\n', '\r', 0x85, 0x202e, 0x2066, 0x2028} {
		t.Run(fmt.Sprintf("file name %U", r), func(t *testing.T) {
			good := writeRecords(t, []audit.Record{{Time: 1, Task: "t", Decision: audit.DecisionAllow}})
			b, err := os.ReadFile(good)
			require.NoError(t, err)
			name := filepath.Join(t.TempDir(), "audit"+string(r)+"valid: 9 records.jsonl")
			require.NoError(t, os.WriteFile(name, append(b, b...), 0o600)) // the record twice: invalid
			code, out, _ := runCLI(approvedAt, "audit", name)
			require.Equal(t, 1, code, out)
			assertClean(t, out, 1, "invalid chain")
			assert.True(t, strings.HasPrefix(out, "invalid: "+printable(name)+": "), out)

			code, _, errOut := runCLI(approvedAt, "staffing", "--audit", good)
			require.Equal(t, 0, code, errOut)
			require.NoError(t, os.Rename(good, name))
			code, out, errOut = runCLI(approvedAt, "staffing", "--audit", name)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "observed in "+printable(name)+" (read, not verified)")
			assertClean(t, out, strings.Count(out, "\n"), "staffing")

			code, _, errOut = runCLI(approvedAt, "receipt", name+".missing", "--key", name, "--rp-id", "x", "--origin", "https://x")
			require.Equal(t, 2, code)
			assertClean(t, errOut, strings.Count(errOut, "\n"), "stderr")
		})
	}
}

// TestPrintable: printable leaves printable text alone and escapes
// everything else unambiguously (a backslash in the text is doubled, so an
// escape in the output is never the text's own).
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"user:dana":                   "user:dana",
		"Zoë 名前 ✓":                    "Zoë 名前 ✓",
		"a\x1b[2Kb":                   `a\x1b[2Kb`,
		"line\nnext":                  `line\nnext`,
		"\u202eevil":                  `\u202eevil`,
		"c1\u0085":                    `c1\u0085`,
		`back\slash`:                  `back\\slash`,
		`\x1b`:                        `\\x1b`,
		"bad \xff utf-8":              `bad \xff utf-8`,
		"nul\x00del\x7f":              `nul\x00del\x7f`,
		"sep\u2028par\u2029iso\u2066": `sep\u2028par\u2029iso\u2066`,
	} {
		assert.Equal(t, want, printable(in), "%q", in)
	}
	for _, r := range controlRunes() {
		assertClean(t, printable("a"+string(r)+"b"), 0, fmt.Sprintf("%U", r))
	}
}

// TestQuorumOneKeyGivenTwice: one Ed25519 key given for two approvers, as
// a PEM file for one and a COSE_Key naming the other Ed25519 label (-19)
// for the other, is one key: a quorum of two that one passkey assertion
// (copied into a second receipt naming the second approver) would
// otherwise meet is invalid.
func TestQuorumOneKeyGivenTwice(t *testing.T) {
	alice := newFixture(t, receipttest.EdDSA)
	doc, err := os.ReadFile(alice.receipt)
	require.NoError(t, err)
	first, err := receipt.Parse(doc)
	require.NoError(t, err)
	cose, err := webauthncbor.Marshal(webauthncose.OKPPublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.OctetKey), Algorithm: int64(webauthncose.AlgEd25519)},
		Curve:         int64(webauthncose.Ed25519), XCoord: alice.signer.PublicKey().(ed25519.PublicKey),
	})
	require.NoError(t, err)
	second := *first
	second.Approver = receipt.Approver{User: "user:bob", CredentialID: []byte("other"), PublicKey: cose}
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{first, &second}}
	raw, err := q.Marshal()
	require.NoError(t, err)
	dir := t.TempDir()
	file, bobKey := filepath.Join(dir, "quorum.json"), filepath.Join(dir, "bob.cose")
	require.NoError(t, os.WriteFile(file, raw, 0o600))
	require.NoError(t, os.WriteFile(bobKey, []byte(base64.RawURLEncoding.EncodeToString(cose)), 0o600))
	code, out, errOut := runCLI(approvedAt, "quorum", file, "--k", "2", "--rp-id", receipttest.RPID, "--origin", receipttest.Origin,
		"--key", "user:dana="+alice.pem, "--key", "user:bob="+bobKey)
	assert.Equal(t, 1, code, "%s%s", out, errOut)
	assert.Contains(t, out, "share a key")
}

// TestReceiptTimeAfterYear9999: a receipt whose unsigned approved_at is in
// year 10000 is invalid, in the text and the JSON form alike (exit 1, a
// reason), never a usage or file error.
func TestReceiptTimeAfterYear9999(t *testing.T) {
	s, err := receipttest.New(receipttest.EdDSA, "user:dana")
	require.NoError(t, err)
	e := receipttest.Effect("finance@example.com")
	r, err := s.Sign(e, receipttest.Card(e), expiresAt, approvedAt)
	require.NoError(t, err)
	r.ApprovedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	f := writeFixture(t, s, r)
	code, out, _ := runCLI(approvedAt, receiptArgs(f, f.cose)...)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "year 9999")
	code, out, errOut := runCLI(approvedAt, receiptArgs(f, f.cose, "--json")...)
	assert.Equal(t, 1, code, errOut)
	var rep receiptReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Valid)
	assert.Contains(t, rep.Reason, "year 9999")
}
