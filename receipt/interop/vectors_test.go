package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/internal/vectorgen"
)

// vectorDir holds the published vectors.
var vectorDir = filepath.Join("..", "testdata", "vectors")

// vectorVerdict is one line of vectors.mjs or verify.py output.
type vectorVerdict struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Valid    bool   `json:"valid"`
	Expected bool   `json:"expected"`
	Error    string `json:"error"`
}

func load(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorDir, name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), name)
}

// goVerdicts is receipt's own verdict on every vector, keyed by file and
// name: the verdict the other verifiers must agree with.
func goVerdicts(t *testing.T) map[[2]string]bool {
	t.Helper()
	out := map[[2]string]bool{}
	var ch vectorgen.ChallengeFile
	load(t, "challenge.json", &ch)
	for _, v := range ch.Vectors {
		d, _ := hex.DecodeString(v.Digest)
		n, _ := hex.DecodeString(v.Nonce)
		c, _ := hex.DecodeString(v.CardHash)
		got := receipt.Challenge(canon.Digest(d), [32]byte(n), v.ExpiresAt, canon.Digest(c))
		out[[2]string{"challenge.json", v.Name}] = hex.EncodeToString(got[:]) == v.Challenge
	}
	var cards vectorgen.CardHashFile
	load(t, "card_hash.json", &cards)
	for _, v := range cards.Vectors {
		h, err := receipt.CardHash([]byte(v.CardJSON))
		out[[2]string{"card_hash.json", v.Name}] = err == nil && h.String() == v.CardHash
	}
	keys := func(m map[string]vectorgen.KeyJSON) map[string]*receipt.TrustedKey {
		ks := map[string]*receipt.TrustedKey{}
		for name, k := range m {
			cose, err := base64.RawURLEncoding.DecodeString(k.COSE)
			require.NoError(t, err)
			ks[name], err = receipt.ParseCOSEKey(cose)
			require.NoError(t, err)
		}
		return ks
	}
	var rf vectorgen.ReceiptFile
	load(t, "receipts.json", &rf)
	rk := keys(rf.Keys)
	p := receipt.Policy{RPID: rf.Policy.RPID, Origins: rf.Policy.Origins}
	for _, v := range rf.Vectors {
		r, err := receipt.Parse(v.Receipt)
		if err == nil {
			_, err = receipt.Verify(r, rk[v.Key], p)
		}
		out[[2]string{"receipts.json", v.Name}] = err == nil
	}
	var qf vectorgen.QuorumFile
	load(t, "quorum.json", &qf)
	qk := keys(qf.Keys)
	for _, v := range qf.Vectors {
		var people []receipt.Person
		for _, person := range v.People {
			rp := receipt.Person{User: person.User}
			for _, k := range person.Keys {
				rp.Keys = append(rp.Keys, qk[k])
			}
			people = append(people, rp)
		}
		q, err := receipt.ParseQuorum(v.Quorum)
		if err == nil {
			_, err = receipt.VerifyQuorum(q, people, v.K, p)
		}
		out[[2]string{"quorum.json", v.Name}] = err == nil
	}
	var cf vectorgen.ChainFile
	load(t, "audit_chains.json", &cf)
	pub, err := hex.DecodeString(cf.GatePublicKey)
	require.NoError(t, err)
	for _, v := range cf.Vectors {
		var export bytes.Buffer
		for _, r := range v.Records {
			require.NoError(t, json.Compact(&export, r))
			export.WriteByte('\n')
		}
		records, err := audit.ReadChain(&export)
		if err == nil && v.Checkpoint != nil {
			err = audit.VerifyChainFrom(records, pub, v.Checkpoint.Checkpoint, v.Checkpoint.Sig)
		} else if err == nil {
			var anchor canon.Digest
			if v.Anchor != "" {
				a, _ := hex.DecodeString(v.Anchor)
				anchor = canon.Digest(a)
			}
			err = audit.VerifyChain(records, anchor)
		}
		out[[2]string{"audit_chains.json", v.Name}] = err == nil
	}
	return out
}

// runVerifier runs an independent verifier over the vectors and requires
// one verdict per vector, each agreeing with receipt's and with the
// vector's expectation.
func runVerifier(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, stderr.String())
	}
	require.NotEqual(t, 2, cmd.ProcessState.ExitCode(), stderr.String())
	want := goVerdicts(t)
	seen := map[[2]string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v vectorVerdict
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		key := [2]string{v.File, v.Name}
		goValid, ok := want[key]
		require.True(t, ok, "%s reported a vector receipt does not know: %v", name, key)
		assert.False(t, seen[key], "%s reported %v twice", name, key)
		seen[key] = true
		assert.Equalf(t, goValid, v.Valid, "%s: %s %q: receipt says valid=%v, %s says %v (%s)", name, v.File, v.Name, goValid, name, v.Valid, v.Error)
		assert.Equalf(t, v.Expected, v.Valid, "%s: %s %q: expected valid=%v (%s)", name, v.File, v.Name, v.Expected, v.Error)
	}
	require.NoError(t, sc.Err())
	assert.Len(t, seen, len(want), "%s checked every vector", name)
	assert.Equal(t, 0, cmd.ProcessState.ExitCode(), "%s exits 0 when it agrees with every vector: %s", name, stderr.String())
}

func TestSimpleWebAuthnVerifiesPublishedVectors(t *testing.T) {
	nodePath := node(t)
	runVerifier(t, "vectors.mjs", nodePath, "vectors.mjs", vectorDir)
}

// python returns the path of a python3 that has the cryptography package,
// or skips the test; with ASU_PYTHON_INTEROP set (as CI sets it) it fails
// instead.
func python(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(path, "-c", "import cryptography").Run()
	}
	if err != nil {
		if os.Getenv("ASU_PYTHON_INTEROP") != "" {
			t.Fatalf("interop: ASU_PYTHON_INTEROP is set but python3 with the cryptography package is missing: %v", err)
		}
		t.Skip("interop: needs python3 with the cryptography package (Debian: python3-cryptography)")
	}
	return path
}

func TestPythonVerifiesPublishedVectors(t *testing.T) {
	py := python(t)
	runVerifier(t, "verify.py", py, filepath.Join("python", "verify.py"), vectorDir)
}

func TestGoVerdictsMatchVectorExpectations(t *testing.T) {
	got := goVerdicts(t)
	var rf vectorgen.ReceiptFile
	load(t, "receipts.json", &rf)
	valid, invalid := 0, 0
	for _, v := range rf.Vectors {
		assert.Equal(t, v.Valid, got[[2]string{"receipts.json", v.Name}], v.Name)
		if v.Valid {
			valid++
		} else {
			invalid++
		}
	}
	assert.Positive(t, valid)
	assert.Positive(t, invalid)
}
