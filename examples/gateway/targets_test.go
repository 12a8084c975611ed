package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestIntroduceRefusesBadInput: introduce names the flag, or the file and
// line, of what it cannot read, and introduces nothing then.
func TestIntroduceRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	startGateway(t, options{db: db})
	list := filepath.Join(dir, "known.txt")
	require.NoError(t, os.WriteFile(list, []byte("# partners\npartner.example\n\nnot an @ address@\n"), 0o600))
	long := filepath.Join(dir, "long.txt")
	require.NoError(t, os.WriteFile(long, []byte(strings.Repeat("a", 5000)+"\n"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"introduce", "-db", db}, "-targets or -file: name at least one recipient"},
		{[]string{"introduce", "-db", db, "-targets", " , "}, "-targets or -file: name at least one recipient"},
		{[]string{"introduce", "-db", db, "-targets", "a@"}, `-targets: "a@"`},
		{[]string{"introduce", "-db", db, "-targets", "https://"}, `-targets: "https://"`},
		{[]string{"introduce", "-db", db, "-file", list}, list + `:4: "not an @ address@"`},
		{[]string{"introduce", "-db", db, "-file", long}, long + ":1"},
		{[]string{"introduce", "-db", db, "-file", filepath.Join(dir, "none.txt")}, "-file: open"},
	} {
		t.Run(strings.Join(tc.args[3:], " "), func(t *testing.T) {
			_, err := adminRun(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestIntroduceMakesARecipientKnown: a second request to a domain nobody
// was seen sending to is refused by the first-contact rule, in any
// spelling; once the operator introduces it (as an address, a host or a
// URL, from the command line or a file) requests to it are cards again.
func TestIntroduceMakesARecipientKnown(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	g := startGateway(t, options{db: db})
	client, err := remote.NewClient(g.AgentURL, g.Token, nil)
	require.NoError(t, err)
	n := 0
	propose := func(to string) stepup.Ticket {
		n++
		tk, err := client.Propose(ctx, stepup.Call{Tool: "send_email", Session: fmt.Sprintf("s%d", n),
			Args:      json.RawMessage(fmt.Sprintf(`{"to":%q,"subject":"Invoice %d"}`, to, n)),
			Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		require.NoError(t, err)
		return tk
	}
	for _, tc := range []struct{ domain, spelled, introduce string }{
		{"partner.example", "Billing@MAIL.Partner.Example.", "-targets=billing@partner.example"},
		{"customer.example", "x@customer.example", "-targets=https://www.customer.example/path"},
		{"supplier.example", "x@eu.supplier.example", "-file"},
	} {
		require.Equal(t, stepup.StatusPending, propose("a@"+tc.domain).Status)
		second := propose(tc.spelled)
		require.Equal(t, stepup.StatusDenied, second.Status)
		assert.Contains(t, second.Reason, "recipient not seen before")

		args := []string{"introduce", "-db", db, tc.introduce}
		if tc.introduce == "-file" {
			f := filepath.Join(dir, "known.txt")
			require.NoError(t, os.WriteFile(f, []byte("# ours\n"+tc.domain+"  # the supplier\n"), 0o600))
			args = append(args, f)
		}
		out, err := adminRun(t, args...)
		require.NoError(t, err)
		assert.Equal(t, "known: "+tc.domain+"\nintroduced 1 recipients: requests to them meet the target limits, not the first-contact rule\n", out)
		assert.Equal(t, stepup.StatusPending, propose(tc.spelled).Status, "known now")
	}
}
