package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// shell runs a printed command line with the runtime token in its
// environment, as a person pasting it would, and returns its output.
func shell(t *testing.T, token, line string) []byte {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), tokenVar+"="+token)
	out, err := cmd.Output()
	require.NoError(t, err, line)
	return out
}

// line returns the first printed line matching re, trimmed.
func line(t *testing.T, printed string, re *regexp.Regexp) string {
	t.Helper()
	for _, l := range strings.Split(printed, "\n") {
		if re.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no line matches %s in:\n%s", re, printed)
	return ""
}

var (
	exportLine  = regexp.MustCompile(`^\s+export ASU_TOKEN=\S+$`)
	proposeLine = regexp.MustCompile(`^\s+curl .*/v1/propose$`)
	waitLine    = regexp.MustCompile(`^\s+curl .*/v1/tickets/TICKET/wait`)
	execLine    = regexp.MustCompile(`^\s+curl -s -X POST .*/v1/tickets/TICKET/execute$`)
	inviteLine  = regexp.MustCompile(`^\s+go run ./examples/gateway invite `)
)

// TestStartupCommandsWork: the commands the gateway prints at start work
// as printed, pasted into a shell, for the user -user names: the token
// export, the propose, and, with the ticket's id put in, the wait and the
// execute; the per-ticket commands printed with the approval link work
// too, and so does the printed invite command while the gateway runs.
func TestStartupCommandsWork(t *testing.T) {
	db := filepath.Join(t.TempDir(), "asu.db")
	g := startGateway(t, options{db: db, user: "user:erin", approver: "user:erin"})
	printed := g.printed()
	assert.Equal(t, "user:erin", g.User)
	passkey := g.enroll(t)

	token := strings.TrimPrefix(line(t, printed, exportLine), "export "+tokenVar+"=")
	require.Equal(t, g.Token, token)
	propose := line(t, printed, proposeLine)
	assert.Contains(t, propose, `"user":"user:erin"`, "the printed call honours -user")
	assert.NotContains(t, propose, token, "commands read the token from the environment")

	var tk struct{ ID, Status string }
	require.NoError(t, json.Unmarshal(shell(t, token, propose), &tk))
	require.Equal(t, "pending", tk.Status)
	require.Eventually(t, func() bool { return strings.Contains(g.printed(), "approval needed: ") }, 5e9, 1e7)
	approve(t, g.Origin, passkey, stepup.TicketID(tk.ID))

	wait := strings.ReplaceAll(line(t, printed, waitLine), "TICKET", tk.ID)
	var waited struct{ Status string }
	require.NoError(t, json.Unmarshal(shell(t, token, wait), &waited))
	assert.Equal(t, "approved", waited.Status)
	execute := strings.ReplaceAll(line(t, printed, execLine), "TICKET", tk.ID)
	var res struct {
		Ticket string
		Output json.RawMessage
	}
	require.NoError(t, json.Unmarshal(shell(t, token, execute), &res))
	assert.Equal(t, tk.ID, res.Ticket)
	assert.JSONEq(t, `{"ok":true,"tool":"send_email"}`, string(res.Output))

	// The commands printed with the approval link name the ticket itself.
	after := g.printed()
	then := line(t, after, regexp.MustCompile(`then wait:\s+curl`))
	assert.Contains(t, then, "/v1/tickets/"+tk.ID+"/wait")
	var again struct{ Status string }
	require.NoError(t, json.Unmarshal(shell(t, token, strings.TrimSpace(strings.TrimPrefix(then, "then wait:"))), &again))
	assert.Equal(t, "executed", again.Status)

	// The printed invite command works while the gateway holds its ports.
	args := strings.Fields(strings.TrimPrefix(line(t, printed, inviteLine), "go run ./examples/gateway "))
	var out bytes.Buffer
	require.NoError(t, cli(context.Background(), args, &out, &out))
	assert.Regexp(t, `^enrollment link for user:erin \(works once, for 24h0m0s\): `+regexp.QuoteMeta(g.Origin)+`/enroll\?invite=\S+\n$`, out.String())
	enrollLink(t, g.Origin, strings.TrimSpace(out.String()[strings.LastIndex(out.String(), " "):]))
}

// TestInviteCommand: invite mints an invite in an existing store and
// starts no server; it refuses a store that does not exist, both stores
// at once, and principals that are not people.
func TestInviteCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "asu.db")
	g := startGateway(t, options{db: db, siteAddr: "127.0.0.1:0"})
	var out bytes.Buffer
	require.NoError(t, runInvite(ctx, &out, []string{"-db", db, "-user", "user:fay", "-origin", g.Origin}))
	link := strings.TrimSpace(out.String()[strings.LastIndex(out.String(), " "):])
	require.True(t, strings.HasPrefix(link, g.Origin+"/enroll?invite="), link)
	enrollLink(t, g.Origin, link) // the running gateway honours it

	missing := filepath.Join(t.TempDir(), "none.db")
	assert.Error(t, runInvite(ctx, &out, []string{"-db", missing, "-user", "user:fay"}))
	_, err := os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "never creates an empty database")
	assert.Error(t, runInvite(ctx, &out, []string{"-db", db, "-postgres", "postgres://x", "-user", "user:fay"}))
	assert.Error(t, runInvite(ctx, &out, []string{"-db", db}), "a user is needed")
	for _, who := range []string{"agent:reports", "policy:v1", "grant:x", "model:m", "group:finance", "dana", "user:", "user:a b"} {
		err := runInvite(ctx, &out, []string{"-db", db, "-user", who})
		assert.ErrorIs(t, err, stepup.ErrNotPermitted, who)
		assert.ErrorContains(t, err, "invite -user "+who+": ", "the error names the flag")
		assert.NotContains(t, err.Error(), "ticket", "an invite has no ticket: %s", who)
	}
}

// TestDefaultNames: with no flags, a new runtime token acts as
// agent:reports for user:dana, and dana is the approver invited at start.
func TestDefaultNames(t *testing.T) {
	fs := flags(&options{}, &bytes.Buffer{})
	assert.Equal(t, "agent:reports", fs.Lookup("agent").DefValue)
	assert.Equal(t, "user:dana", fs.Lookup("user").DefValue)
	assert.Equal(t, "user:dana", fs.Lookup("approver").DefValue)
	assert.Error(t, cli(context.Background(), []string{"extra"}, &bytes.Buffer{}, &bytes.Buffer{}))
}
