package httpexec_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/httpexec"
)

// TestPythonCheckInTheDocs holds the package documentation's Python
// verifier to testdata/verify.py, and runs it (when python3 is on PATH)
// on a request an Executor signed, as sent and tampered with.
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
	assert.LessOrEqual(t, strings.Count(string(script), "\n"), 20, "twenty lines")

	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	r := captured(t)
	run := func(body []byte, now int64) (string, error) {
		h := map[string]string{}
		for _, k := range []string{httpexec.HeaderSignature, httpexec.HeaderTool, httpexec.HeaderIdempotencyKey} {
			h[k] = r.header.Get(k)
		}
		hj, err := json.Marshal(h)
		require.NoError(t, err)
		prog := string(script) + `
import sys, unittest.mock
headers = json.loads(sys.argv[1])
with unittest.mock.patch("time.time", return_value=int(sys.argv[2])):
    try:
        msg = verify(headers, sys.stdin.buffer.read(), b"` + string(secret) + `")
        print("ok", msg["idempotency_key"], msg["effect"]["args"]["amount"], msg["ticket"])
    except ValueError as e:
        print("refused", e)
`
		cmd := exec.CommandContext(t.Context(), py, "-c", prog, string(hj), jsonInt(now))
		cmd.Stdin = bytes.NewReader(body)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run(r.body, fixedNow.Unix())
	require.NoError(t, err, out)
	assert.Equal(t, "ok "+key+" 19.99 t_abc", out)

	tampered := bytes.Replace(r.body, []byte("19.99"), []byte("99.99"), 1)
	out, err = run(tampered, fixedNow.Unix())
	require.NoError(t, err, out)
	assert.Equal(t, "refused bad signature", out)

	out, err = run(r.body, fixedNow.Unix()+301)
	require.NoError(t, err, out)
	assert.Equal(t, "refused timestamp missing or outside the window", out)
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
