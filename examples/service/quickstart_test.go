package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/stepuptest"
)

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o600) }

// quickstartBlock returns the shell lines of the README's service
// quickstart: the first sh block after its heading.
func quickstartBlock(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "## Service quickstart")
	require.True(t, ok, "the README has a service quickstart")
	_, rest, ok = strings.Cut(rest, "```sh\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

var (
	exportLine  = regexp.MustCompile(`^export ([A-Z_]+)=`)
	approveLink = regexp.MustCompile(`http://localhost:8701/approve/[0-9a-zA-Z_-]+`)
	dataAttr    = regexp.MustCompile(`data-(options|approve|view)="([^"]*)"`)
)

// TestReadmeServiceQuickstart runs the README's service quickstart as
// printed, line by line, from the repository's root, with the fake
// authenticator doing what the lines marked "Browser:" ask of a person.
// It needs curl and the ports the quickstart names free.
func TestReadmeServiceQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tool server and the gateway")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	for _, port := range []string{"8700", "8701", "8790"} {
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Skipf("port %s is taken: the quickstart's commands name it", port)
		}
		ln.Close()
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	lines := quickstartBlock(t, string(readme))
	env := os.Environ()
	var outputs []string
	for _, line := range lines {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		switch {
		case strings.HasSuffix(line, "&"):
			background(t, root, env, strings.TrimSuffix(line, "&"))
			outputs = append(outputs, "")
		case exportLine.MatchString(line):
			name := exportLine.FindStringSubmatch(line)[1]
			out := shellLine(ctx, t, root, env, line+"\nprintf '%s' \"$"+name+"\"")
			require.NotEmpty(t, out, line)
			env = append(env, name+"="+out)
			if name == "ASU_DIR" { // removed after the servers stop (cleanups run last first)
				t.Cleanup(func() { os.RemoveAll(out) })
			}
			outputs = append(outputs, out)
		default:
			out := shellLine(ctx, t, root, env, line)
			outputs = append(outputs, out)
			if _, ask, ok := strings.Cut(line, "# Browser: "); ok {
				link := strings.TrimSpace(out)
				require.True(t, strings.HasPrefix(link, "http://localhost:8701/"), "%s printed %q", line, out)
				if strings.Contains(ask, "enroll") {
					browserEnroll(t, link)
				} else {
					browserApprove(t, link)
				}
			}
		}
		cancel()
	}
	dirOf := func() string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "ASU_DIR="); ok {
				return v
			}
		}
		return ""
	}
	dir := dirOf()
	require.NotEmpty(t, dir)
	all := strings.Join(outputs, "\n")
	assert.Contains(t, all, `"status":"pending"`, "the refund waits for a person")
	assert.Contains(t, all, `"status":"approved"`, "then it is approved")
	assert.Contains(t, all, `"idempotency_key":`, "and executed")
	toolLog := outputs[len(outputs)-1]
	assert.Equal(t, 1, strings.Count(toolLog, "ran issue_refund "), "the tool ran once:\n%s", toolLog)
	assert.Contains(t, toolLog, `ran issue_refund {"amount":19.99,"order":"A-17"} for user:dana`)
	assert.NotContains(t, toolLog, "refused")

	t.Run("the README's Python client", func(t *testing.T) {
		runPythonClient(t, string(readme), dir, env)
	})
}

// runPythonClient runs the README's Python block against the quickstart's
// gateway, still running, and approves the refund it proposes.
func runPythonClient(t *testing.T, readme, dir string, env []string) {
	if err := exec.Command("python3", "-c", "import requests").Run(); err != nil {
		t.Skip("python3 with requests is not installed")
	}
	_, rest, ok := strings.Cut(readme, "### Calling the service from Python")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```python\n")
	require.True(t, ok)
	script, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	assert.LessOrEqual(t, strings.Count(script, "\n"), 14, "a dozen lines or so")

	links := func() []string {
		b, err := os.ReadFile(filepath.Join(dir, "gateway.log"))
		require.NoError(t, err)
		return approveLink.FindAllString(string(b), -1)
	}
	before := len(links())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", script)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	require.Eventually(t, func() bool { return len(links()) > before }, time.Minute, 50*time.Millisecond,
		"the Python client's refund waits for a person")
	browserApprove(t, links()[len(links())-1])
	require.NoError(t, <-done, out.String())
	assert.Contains(t, out.String(), "'idempotency_key': ", "it executed: %s", out.String())
	toolLog, err := os.ReadFile(filepath.Join(dir, "tool.log"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(toolLog), "ran issue_refund "))
}

// shellLine runs line in sh from dir with env and returns its output.
func shellLine(ctx context.Context, t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, out)
	return string(out)
}

// background starts line in sh as a process group of its own, ended
// when the test ends.
func background(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start(), line)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}

// page GETs u and returns its data- attributes.
func page(t *testing.T, u string) map[string][]byte {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	attrs := map[string][]byte{}
	for _, m := range dataAttr.FindAllStringSubmatch(string(b), -1) {
		attrs[m[1]] = []byte(html.UnescapeString(m[2]))
	}
	return attrs
}

// postSite posts a JSON body to the approval site as its page does.
func postSite(t *testing.T, u string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://localhost:8701")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// authenticator is the fake passkey the "browser" enrolls and approves with.
var authenticator = stepuptest.NewAuthenticator("localhost", "http://localhost:8701")

func browserEnroll(t *testing.T, link string) {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	reg, err := authenticator.Register(page(t, link)["options"])
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"invite": u.Query().Get("invite"), "credential": json.RawMessage(reg)})
	require.NoError(t, err)
	code, out := postSite(t, "http://localhost:8701/enroll", body)
	require.Equal(t, http.StatusOK, code, out)
}

// browserApprove reads the card as the page's script does (it says the
// card is shown), then approves; while the dwell time runs, the site
// answers too_fast and the person approves again.
func browserApprove(t *testing.T, link string) {
	t.Helper()
	attrs := page(t, link)
	view, err := json.Marshal(map[string]string{"view": string(attrs["view"])})
	require.NoError(t, err)
	code, out := postSite(t, link+"/shown", view)
	require.Equal(t, http.StatusOK, code, out)
	for range 60 {
		assertion, err := authenticator.Assert(attrs["approve"])
		require.NoError(t, err)
		code, out = postSite(t, link, assertion)
		if code == http.StatusOK {
			return
		}
		require.Contains(t, out, "too_fast", "approve answered %d", code)
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the approval was never accepted: %s", out)
}
