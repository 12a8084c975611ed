package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// e2eLine is one line the TypeScript host prints.
type e2eLine struct {
	Event    string   `json:"event"`
	Via      string   `json:"via"`
	URL      string   `json:"url"`
	Step     string   `json:"step"`
	Tools    []string `json:"tools"`
	IsError  bool     `json:"isError"`
	Text     string   `json:"text"`
	Error    string   `json:"error"`
	Message  string   `json:"message"`
	Progress int      `json:"progress"`
	Fatal    string   `json:"fatal"`
}

// e2e runs the gateway in front of a real upstream server from npm, on
// HTTP, and the official TypeScript client (e2e/client.mjs) against it.
// approver is called, in its own goroutine, for each approval link the
// host is sent, with the approver's passkey; check with the host's steps,
// by step name, once the host is done and while the gateway still runs.
func e2e(t *testing.T, scenario, catalog, dir string, upstream []string,
	approver func(id stepup.TicketID, via string, r ready, pk *stepuptest.Authenticator), check func(map[string]e2eLine, ready)) {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	o := defaults()
	o.listen, o.hostToken = "127.0.0.1:0", "e2e-host-token-0123456789-0123456789-0123"
	o.upstreamCmd, o.catalog, o.root = append([]string{node}, upstream...), catalog, dir
	o.wait, o.progress, o.approver = 30*time.Second, 200*time.Millisecond, ""
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readyc, done := make(chan ready, 1), make(chan error, 1)
	var logs strings.Builder
	go func() { done <- run(ctx, o, nil, &syncWriter{w: &logs}, func(r ready) { readyc <- r }) }()
	var r ready
	select {
	case r = <-readyc:
	case err := <-done:
		t.Fatalf("gateway did not start: %v\n%s", err, logs.String())
	}
	pk := enrollAt(t, r)

	cmd := exec.Command(node, "e2e/client.mjs", scenario, r.Host, dir)
	cmd.Env = append(os.Environ(), "ASU_MCP_TOKEN="+o.hostToken)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	steps := map[string]e2eLine{}
	var wg sync.WaitGroup
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var l e2eLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		require.Empty(t, l.Fatal)
		switch {
		case l.Event == "link":
			u, err := url.Parse(l.URL)
			require.NoError(t, err)
			id := stepup.TicketID(strings.TrimPrefix(u.Path, "/approve/"))
			wg.Go(func() { approver(id, l.Via, r, pk) })
		case l.Step != "":
			steps[l.Step] = l
		}
	}
	require.NoError(t, cmd.Wait())
	wg.Wait()
	check(steps, r)
	cancel()
	require.NoError(t, <-done)
}

// enrollAt enrolls user:dana's fake passkey through the gateway's own
// invite and registration ceremony.
func enrollAt(t *testing.T, r ready) *stepuptest.Authenticator {
	t.Helper()
	ctx := context.Background()
	token, err := r.enroll.Invite(ctx, "user:dana")
	require.NoError(t, err)
	opts, err := r.enroll.BeginEnroll(ctx, token)
	require.NoError(t, err)
	pk := stepuptest.NewAuthenticator("localhost", r.Site)
	resp, err := pk.Register(opts)
	require.NoError(t, err)
	_, err = r.enroll.FinishEnroll(ctx, token, resp)
	require.NoError(t, err)
	return pk
}

func skipUnlessE2E(t *testing.T) {
	if os.Getenv("ASU_MCP_E2E") != "1" {
		t.Skip("end to end against npm servers: run with ASU_MCP_E2E=1 after npm ci in examples/mcp/e2e (.ci/run does)")
	}
}

// TestEndToEndFilesystem: the filesystem server on a temporary directory,
// driven by the TypeScript client. An allowed read runs; a write waits,
// the client gets the URL elicitation, the approver approves with a
// passkey, and the write runs once; a write whose file changed after it
// was requested is refused; a denied write returns the reason; a client
// that times out leaves a cancelled ticket and nothing runs; a client
// without elicitation gets the link as a log message and progress that
// keeps its 1 s timeout from firing while the approver takes longer.
func TestEndToEndFilesystem(t *testing.T) {
	skipUnlessE2E(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "changed.txt"), []byte("v1"), 0o600))
	var mu sync.Mutex
	var timedOut stepup.TicketID
	vias := map[string]string{}
	e2e(t, "filesystem", "e2e/filesystem.catalog.json", dir,
		[]string{"e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", dir},
		func(id stepup.TicketID, via string, r ready, pk *stepuptest.Authenticator) {
			ctx := context.Background()
			desk := r.gate.Desk()
			p, err := desk.Prompt(ctx, id)
			if !assert.NoError(t, err) {
				return
			}
			card := p.Card.Text()
			approve := func() {
				answer, err := pk.Assert(p.Options)
				require.NoError(t, err)
				_, err = desk.Approve(ctx, id, answer)
				assert.NoError(t, err)
			}
			mu.Lock()
			for _, name := range []string{"approved", "changed", "denied", "timeout", "progress"} {
				if strings.Contains(card, name+".txt") {
					vias[name] = via
				}
			}
			mu.Unlock()
			switch {
			case strings.Contains(card, "approved.txt"):
				approve()
			case strings.Contains(card, "changed.txt"):
				require.NoError(t, os.WriteFile(filepath.Join(dir, "changed.txt"), []byte("v2"), 0o600))
				approve()
			case strings.Contains(card, "denied.txt"):
				answer, err := pk.Assert(p.DenyOptions)
				require.NoError(t, err)
				_, err = desk.Deny(ctx, id, answer, "not this one")
				assert.NoError(t, err)
			case strings.Contains(card, "timeout.txt"):
				mu.Lock()
				timedOut = id
				mu.Unlock()
			case strings.Contains(card, "progress.txt"):
				time.Sleep(2500 * time.Millisecond) // longer than the host's 1 s timeout
				approve()
			default:
				t.Errorf("unexpected approval request:\n%s", card)
			}
		}, func(steps map[string]e2eLine, r ready) {
			checkFilesystem(t, dir, steps, r, timedOut, vias)
		})
}

func checkFilesystem(t *testing.T, dir string, steps map[string]e2eLine, r ready, timedOut stepup.TicketID, vias map[string]string) {

	assert.Contains(t, steps["list"].Tools, "write_file")
	assert.Contains(t, steps["list"].Tools, "move_file", "tools outside the catalog are offered, and denied")
	assert.Equal(t, e2eLine{Step: "read", Text: "hello"}, steps["read"])

	assert.False(t, steps["write approved"].IsError, steps["write approved"].Text)
	assert.Equal(t, "elicitation", vias["approved"])
	got, err := os.ReadFile(filepath.Join(dir, "approved.txt"))
	require.NoError(t, err)
	assert.Equal(t, "approved content", string(got))

	assert.True(t, steps["write changed"].IsError)
	assert.Contains(t, steps["write changed"].Text, "differs from what was approved")
	got, err = os.ReadFile(filepath.Join(dir, "changed.txt"))
	require.NoError(t, err)
	assert.Equal(t, "v2", string(got))

	assert.True(t, steps["write denied"].IsError)
	assert.Equal(t, "denied by user:dana: not this one", steps["write denied"].Text)
	assert.NoFileExists(t, filepath.Join(dir, "denied.txt"))

	assert.Equal(t, "-32001", steps["write timeout"].Error, steps["write timeout"].Message)
	require.NotEmpty(t, timedOut)
	tk, err := r.gate.Ticket(context.Background(), timedOut)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, tk.Status)
	assert.Equal(t, mcpgate.ReasonHostCancelled, tk.Reason)
	_, err = r.gate.Desk().Prompt(context.Background(), timedOut)
	assert.ErrorIs(t, err, stepup.ErrResolved, "the approval page can no longer approve it")
	assert.NoFileExists(t, filepath.Join(dir, "timeout.txt"))

	assert.False(t, steps["write progress"].IsError, "%+v", steps["write progress"])
	assert.Equal(t, "log", vias["progress"])
	assert.GreaterOrEqual(t, steps["write progress"].Progress, 5)
	got, err = os.ReadFile(filepath.Join(dir, "progress.txt"))
	require.NoError(t, err)
	assert.Equal(t, "waited", string(got))
}

// TestEndToEndEverything: the reference "everything" server; admitted
// reads run, get-env (which claims to be read-only and would hand the
// model the environment) is not admitted and is denied.
func TestEndToEndEverything(t *testing.T) {
	skipUnlessE2E(t)
	e2e(t, "everything", "e2e/everything.catalog.json", t.TempDir(),
		[]string{"e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"},
		func(id stepup.TicketID, _ string, _ ready, _ *stepuptest.Authenticator) {
			t.Errorf("no call here needs a person, yet ticket %s waits", id)
		}, func(steps map[string]e2eLine, _ ready) { checkEverything(t, steps) })
}

func checkEverything(t *testing.T, steps map[string]e2eLine) {
	assert.Contains(t, steps["list"].Tools, "get-env")
	assert.False(t, steps["echo"].IsError, steps["echo"].Text)
	assert.Contains(t, steps["echo"].Text, "hello")
	assert.Equal(t, e2eLine{Step: "get-env", IsError: true, Text: "denied: unknown tool"}, steps["get-env"])
	assert.False(t, steps["sum"].IsError, steps["sum"].Text)
	assert.Contains(t, steps["sum"].Text, "5")
}
