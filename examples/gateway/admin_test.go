package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// adminRun runs an admin command line and returns what it printed.
func adminRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := cli(context.Background(), args, &out, &out)
	return out.String(), err
}

// TestAdminCommandsRefuseBadInput: every admin command refuses bad input
// with an error that names the flag, and never creates a database.
func TestAdminCommandsRefuseBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "asu.db")
	startGateway(t, options{db: db})
	missing := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approvers"}, "name the gateway's store"},
		{[]string{"approvers", "-db", missing}, "never creating an empty database"},
		{[]string{"approvers", "-db", db, "-postgres", "postgres://x"}, "not both"},
		{[]string{"approvers", "-db", db, "-user", "agent:reports"}, "-user agent:reports: an agent cannot be invited"},
		{[]string{"approvers", "-db", db, "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"revoke-passkey", "-db", db}, "-id: give the passkey's id"},
		{[]string{"revoke-passkey", "-db", db, "-id", "not base64!"}, "-id: give the passkey's id"},
		{[]string{"revoke-passkey", "-db", db, "-id", "AAAA"}, "-id AAAA: no passkey has that id"},
		{[]string{"revoke-passkey", "-db", db, "-id", "AAAA", "-by", " "}, "-by: name who acts"},
		{[]string{"revoke-invite", "-db", db}, "-invite: give the invite's link or token"},
		{[]string{"revoke-invite", "-db", db, "-invite", "garbage"}, "-invite: that is not an invite link or token"},
		{[]string{"revoke-invite", "-db", db, "-invite", "http://localhost:8701/enroll?invite=AAAA"}, "-invite: that is not an invite"},
		{[]string{"tickets", "-db", db, "-state", "pending,running"}, `-state: "running" is not a ticket state`},
		{[]string{"tickets", "-db", db, "-limit", "0"}, "-limit: must be positive"},
		{[]string{"revoke-approval", "-db", db}, "-ticket: give the approved ticket's id"},
		{[]string{"revoke-approval", "-db", db, "-ticket", "t_nope"}, "-ticket t_nope: no ticket has that id"},
		{[]string{"revoke-grant", "-db", db}, "-grant: give the grant's id"},
		{[]string{"revoke-grant", "-db", db, "-grant", "g_nope"}, "-grant g_nope: no grant has that id"},
		{[]string{"audit", "-db", db}, "-out: name the new file"},
		{[]string{"nonsense"}, "the commands are approvers, audit, introduce, invite, reconcile, revoke-approval, revoke-grant, revoke-invite, revoke-passkey, tickets, watermark"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := adminRun(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestAdminCommandsAct: each command does what it says in one line, and
// the running gateway honours it at once.
func TestAdminCommandsAct(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "asu.db")
	g := startGateway(t, options{db: db})
	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)

	// An invite revoked enrolls nothing.
	out, err := adminRun(t, "invite", "-db", db, "-origin", g.Origin, "-user", "user:gus")
	require.NoError(t, err)
	link := strings.TrimSpace(out[strings.LastIndex(out, " "):])
	out, err = adminRun(t, "revoke-invite", "-db", db, "-invite", link)
	require.NoError(t, err)
	assert.Equal(t, "revoked the invite of user:gus: it enrolls no passkey\n", out)
	_, err = adminRun(t, "revoke-invite", "-db", db, "-invite", link)
	assert.ErrorContains(t, err, "already revoked")
	code, _ := status(t, link)
	assert.NotEqual(t, 200, code, "the revoked invite's page refuses")

	// An approval revoked never runs.
	out, err = adminRun(t, "invite", "-db", db, "-origin", g.Origin, "-user", "user:dana")
	require.NoError(t, err)
	dana := enrollLink(t, g.Origin, strings.TrimSpace(out[strings.LastIndex(out, " "):]))
	tk, err := client.Propose(ctx, stepup.Call{Tool: "send_email", Session: "s",
		Args:      json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`),
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
	require.NoError(t, err)
	out, err = adminRun(t, "tickets", "-db", db)
	require.NoError(t, err)
	assert.Contains(t, out, string(tk.ID)+"  pending    send_email  for user:dana by agent:reports  decided by user:dana")
	assert.Contains(t, out, "tickets: 1 pending,approved\n")
	approve(t, g.Origin, dana, tk.ID)
	out, err = adminRun(t, "revoke-approval", "-db", db, "-ticket", string(tk.ID), "-reason", "sent by mistake")
	require.NoError(t, err)
	assert.Equal(t, "revoked the approval of ticket "+string(tk.ID)+" (send_email): it never runs\n", out)
	_, err = client.Execute(ctx, tk.ID)
	require.Error(t, err)
	out, err = adminRun(t, "tickets", "-db", db, "-state", "revoked")
	require.NoError(t, err)
	assert.Contains(t, out, string(tk.ID)+"  revoked")
	_, err = adminRun(t, "revoke-approval", "-db", db, "-ticket", string(tk.ID))
	assert.ErrorContains(t, err, "it can no longer be revoked")

	// Dana is listed with her passkey.
	out, err = adminRun(t, "approvers", "-db", db, "-user", "user:nobody")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^user:dana  passkey \S+  enrolled \S+  unsealed  active$`, out)
	assert.Contains(t, out, "approvers: 1 people with passkeys, 1 active passkeys, 0 revoked")
}

func TestStartLineSaysWhatTheTemporaryDirectoryHolds(t *testing.T) {
	for _, tc := range []struct {
		o          options
		want, omit string
	}{
		{options{}, "a demo database and files; removed at exit", ""},
		{options{files: "/srv/files"}, "a demo database; removed at exit", "files"},
		{options{db: "asu.db"}, "files directory: /d (the demo's q3.csv", "database"},
		{options{postgres: "postgres://x"}, "files directory: /d", "database"},
	} {
		line := tempDirLine(tc.o, "/d")
		assert.Contains(t, line, tc.want)
		if tc.omit != "" {
			assert.NotContains(t, strings.SplitN(line, "(", 2)[1], tc.omit, line)
		}
	}
	g := startGateway(t, options{db: filepath.Join(t.TempDir(), "asu.db")})
	assert.NotContains(t, g.printed(), "data directory:", "-db names a file: no database is removed at exit")
	assert.Contains(t, g.printed(), "files directory: ")
}
