package httpexec_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/plug"
)

// pythonCase is one request for the documentation's Python verifier: its
// headers (a header absent from the map is absent from the request), its
// body, the tool the verifier guards and the time it reads.
type pythonCase struct {
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body"` // base64 in JSON
	Tool    string            `json:"tool"`
	Now     int64             `json:"now"`
}

// runPython runs testdata/verify.py on every case in one python3 process
// and returns one line a case: "ok <key> <amount> <ticket>", "refused
// <reason>" for a ValueError, or "CRASH <type>" for any other exception.
// Without python3 it skips the test, unless ASU_PYTHON_INTEROP is set (as
// CI sets it), when it fails.
func runPython(t *testing.T, cases []pythonCase) []string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("ASU_PYTHON_INTEROP") != "" {
			t.Fatalf("ASU_PYTHON_INTEROP is set but python3 is missing: %v", err)
		}
		t.Skip("python3 not on PATH")
	}
	script, err := os.ReadFile("testdata/verify.py")
	require.NoError(t, err)
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	// JSON cannot carry a lone surrogate from Go; a header value may still
	// hold one in Python, so a placeholder stands for it.
	in = bytes.ReplaceAll(in, []byte(surrogate), []byte(`\ud800`))
	prog := string(script) + `
import base64, sys, unittest.mock
for c in json.load(sys.stdin):
    with unittest.mock.patch("time.time", return_value=c["now"]):
        try:
            msg = verify(c["headers"], base64.b64decode(c["body"]), b"` + string(secret) + `", c["tool"])
            print("ok", msg["idempotency_key"], msg["effect"]["args"]["amount"], msg["ticket"])
        except ValueError as e:
            print("refused", e)
        except Exception as e:
            print("CRASH", type(e).__name__, repr(e))
`
	cmd := exec.CommandContext(t.Context(), py, "-c", prog)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.Len(t, lines, len(cases), "one verdict a case")
	return lines
}

// surrogate stands, in a generated header value, for a lone UTF-16
// surrogate, which only Python can hold in a string.
const surrogate = "<lone-surrogate>"

// pythonHeaders is the three signed headers of r.
func pythonHeaders(r received) map[string]string {
	h := map[string]string{}
	for _, k := range []string{httpexec.HeaderSignature, httpexec.HeaderTool, httpexec.HeaderIdempotencyKey} {
		h[k] = r.header.Get(k)
	}
	return h
}

// TestPythonCheckInTheDocs holds the package documentation's Python
// verifier to testdata/verify.py, and runs it (when python3 is on PATH)
// on a request an Executor signed, as sent, tampered with, late, and
// received by another tool's verifier under a shared secret.
func TestPythonCheckInTheDocs(t *testing.T) {
	script, err := os.ReadFile("testdata/verify.py")
	require.NoError(t, err)
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var quoted strings.Builder
	for line := range strings.Lines(string(script)) {
		if line == "\n" {
			quoted.WriteString("//\n")
		} else {
			quoted.WriteString("//\t" + line)
		}
	}
	require.Contains(t, string(doc), quoted.String(), "doc.go shows testdata/verify.py verbatim")
	assert.LessOrEqual(t, strings.Count(string(script), "\n"), 24, "two dozen lines")

	r := captured(t)
	email := capturedFor(t, "send_email")
	now := fixedNow.Unix()
	out := runPython(t, []pythonCase{
		{pythonHeaders(r), r.body, "issue_refund", now},
		{pythonHeaders(r), bytes.Replace(r.body, []byte("19.99"), []byte("99.99"), 1), "issue_refund", now},
		{pythonHeaders(r), r.body, "issue_refund", now + 301},
		{pythonHeaders(email), email.body, "issue_refund", now},
		{pythonHeaders(email), email.body, "send_email", now},
	})
	assert.Equal(t, []string{
		"ok " + key + " 19.99 t_abc",
		"refused bad signature",
		"refused timestamp missing or outside the window",
		"refused the request is for another tool",
		"ok " + key + " 19.99 t_abc",
	}, out)
}

// capturedFor is one request an Executor of tool signed at fixedNow,
// under the tests' secret, shared by every tool.
func capturedFor(t *testing.T, tool string) received {
	t.Helper()
	tr := &transport{}
	e, err := httpexec.New(tool, "http://tools.invalid/"+tool, secret, &httpexec.Options{Now: clock, Client: &http.Client{Transport: tr}})
	require.NoError(t, err)
	eff := refund("19.99")
	eff.Tool = tool
	_, err = e.Execute(plug.WithTicket(t.Context(), "t_abc"), eff, key)
	require.NoError(t, err)
	return tr.last
}

// genHostile draws a header value a sender without the secret might put
// in front of the verifier: pieces of the genuine one, non-ASCII digits
// and letters, separators, controls, a lone surrogate, runs far longer
// than any header the gate writes.
func genHostile(r *rand.Rand, genuine string) string {
	pieces := []string{genuine, genuine[:r.IntN(len(genuine)+1)], "\u00e9", "\u0660\u0661", "\u00b2", "\uff11", "\x00", "\n", " ", "\u00a0",
		",", "=", "t=", "v1=", "t=" + strconv.FormatInt(fixedNow.Unix(), 10), strings.Repeat("9", 5000), "ab", "ZZ", surrogate, "\U0001F600"}
	var b strings.Builder
	for range 1 + r.IntN(4) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// genSignatureHeader draws a signature header from items around the
// genuine ones: the right timestamp and MAC, spelled otherwise or not,
// and hostile items between them.
func genSignatureHeader(r *rand.Rand, ts, mac string) string {
	items := []func() string{
		func() string { return "t=" + ts },
		func() string { return "v1=" + mac },
		func() string { return "v1=" + strings.ToUpper(mac) },
		func() string { return " v1=" + mac + " " },
		func() string { return "t=0" + ts },
		func() string { return "t=" + strings.Map(func(c rune) rune { return c - '0' + '\u0660' }, ts) },
		func() string { return "v1=\u00e9" + mac[2:] },
		func() string { return "v1=" + mac[:r.IntN(len(mac))] },
		func() string { return "junk" },
		func() string { return "" },
		func() string { return "x=" + genHostile(r, ts) },
		func() string { return genHostile(r, mac) },
	}
	var parts []string
	for range r.IntN(5) {
		parts = append(parts, items[r.IntN(len(items))]())
	}
	return strings.Join(parts, ",")
}

// TestPythonVerifierRefusesHostileHeadersWithValueError: for thousands of
// generated header sets, the documentation's Python verifier keeps its
// docstring's promise, the effect message or ValueError and nothing
// else; it accepts only the genuine tool, key and timestamp; and it
// accepts every header set the Go verifier accepts.
func TestPythonVerifierRefusesHostileHeadersWithValueError(t *testing.T) {
	r := captured(t)
	sig := r.header.Get(httpexec.HeaderSignature)
	ts, mac, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
	_, err := hex.DecodeString(mac)
	require.NoError(t, err, "the signature header is t=...,v1=<hex>")
	genuine := pythonHeaders(r)

	rng := rand.New(rand.NewPCG(7, 8))
	var cases []pythonCase
	for range 3000 {
		h := map[string]string{}
		for k, v := range genuine {
			switch rng.IntN(6) {
			case 0: // absent
			case 1:
				if k == httpexec.HeaderSignature {
					h[k] = genSignatureHeader(rng, ts, mac)
				} else {
					h[k] = genHostile(rng, v)
				}
			case 2:
				h[k] = genSignatureHeader(rng, ts, mac)
			default:
				h[k] = v
			}
		}
		cases = append(cases, pythonCase{h, r.body, "issue_refund", fixedNow.Unix()})
	}
	out := runPython(t, cases)

	refused, accepted := 0, 0
	for i, c := range cases {
		verdict := out[i]
		require.NotContains(t, verdict, "CRASH", "headers %q", c.Headers)
		if !strings.HasPrefix(verdict, "ok ") {
			require.True(t, strings.HasPrefix(verdict, "refused "), "headers %q: %s", c.Headers, verdict)
			refused++
		} else {
			accepted++
			assert.Equal(t, genuine[httpexec.HeaderTool], c.Headers[httpexec.HeaderTool], "accepted only the signed tool")
			assert.Equal(t, genuine[httpexec.HeaderIdempotencyKey], c.Headers[httpexec.HeaderIdempotencyKey], "accepted only the signed key")
		}
		if strings.Contains(strings.Join([]string{c.Headers[httpexec.HeaderSignature], c.Headers[httpexec.HeaderTool], c.Headers[httpexec.HeaderIdempotencyKey]}, ""), surrogate) {
			continue // Go never sees that string
		}
		h := http.Header{}
		for k, v := range c.Headers {
			h[k] = []string{v}
		}
		if _, err := httpexec.VerifyMessage(h, r.body, "issue_refund", secret, time.Minute, fixedNow); err == nil {
			assert.True(t, strings.HasPrefix(verdict, "ok "), "Go accepts, Python refuses: headers %q: %s", c.Headers, verdict)
		}
	}
	assert.Greater(t, refused, 1000, "most generated headers are refused")
	assert.Greater(t, accepted, 50, "some generated headers keep their meaning")
}
