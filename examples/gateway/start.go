package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentstepup/asu/stepup"
)

// tokenVar is the shell variable the printed commands read the runtime
// token from, so they keep working after a restart, when the token is no
// longer printed.
const tokenVar = "ASU_TOKEN"

// printStart tells the operator what runs where and what to do next, with
// commands that work as printed.
func printStart(w io.Writer, o options, s started, where string) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("store:         %s", where)
	p("agent API:     %s  (runtimes only, with a bearer token)", s.AgentURL)
	p("approval site: %s  (approvers only; passkeys work on this origin only)", s.SiteURL)
	if s.InboxURL != "" {
		p("inbox:         %s  (approvers sign in with their passkey and see their queue, live)", s.InboxURL)
	}
	if s.MetricsURL != "" {
		guard := "open to whoever reaches it"
		if o.svc.operatorTokenFile != "" {
			guard = "with the bearer token in " + o.svc.operatorTokenFile
		}
		p("metrics:       %s  (for Prometheus to scrape, %s; on a listener of its own)", s.MetricsURL, guard)
	}
	p("")
	step := 1
	if s.InviteLink != "" {
		p("%d. Enroll a passkey for %s: open this link in a browser (it works once):", step, o.approver)
		p("     %s", s.InviteLink)
		step++
	}
	p("%d. Invite more approvers at any time, while this runs:", step)
	p("     %s", inviteCommand(o, s.Origin))
	step++
	if s.Token != "" {
		where := "it is not stored; it works until the gateway stops"
		if o.tokens != "" {
			where = "only its hash is kept, in " + o.tokens
		}
		p("%d. The runtime's token, for %s acting for %s, shown this once (%s):", step, s.Agent, s.User, where)
		p("     export %s=%s", tokenVar, s.Token)
	} else {
		p("%d. Runtime tokens are in %s, by hash only: set %s to the token printed when it was made.",
			step, o.tokens, tokenVar)
	}
	step++
	p("%d. Propose a call as %s for %s. It answers a ticket: \"allowed\" may run at once, \"denied\" is final,", step, s.Agent, s.User)
	p("   \"pending\" waits for a person, and the approval link is printed here:")
	p("     curl -s -H \"Authorization: Bearer $%s\" -d '%s' %s/v1/propose", tokenVar, exampleCall(s.Agent, s.User), s.AgentURL)
	step++
	p("%d. Wait for the decision, then execute; put the ticket's \"id\" in place of TICKET:", step)
	wait, exec := ticketCommands(s.AgentURL, "TICKET")
	p("     %s", wait)
	p("     %s", exec)
	p("")
}

// ticketCommands are the curl commands that wait for ticket id and
// execute it. Execute sends no body: it runs what was approved.
func ticketCommands(agentURL string, id stepup.TicketID) (wait, execute string) {
	auth := fmt.Sprintf("-H \"Authorization: Bearer $%s\"", tokenVar)
	return fmt.Sprintf("curl -s %s '%s/v1/tickets/%s/wait?timeout=30s'", auth, agentURL, id),
		fmt.Sprintf("curl -s -X POST %s %s/v1/tickets/%s/execute", auth, agentURL, id)
}

// inviteCommand is the command that mints an invite in this gateway's
// store. It never prints a PostgreSQL DSN, which may hold a password.
func inviteCommand(o options, origin string) string {
	var b strings.Builder
	b.WriteString("go run ./examples/gateway invite")
	if o.postgres != "" {
		b.WriteString(" -postgres \"$ASU_POSTGRES_DSN\"")
	} else {
		b.WriteString(" -db " + shellQuote(o.db))
	}
	if origin != "http://localhost:8701" {
		b.WriteString(" -origin " + shellQuote(origin))
	}
	b.WriteString(" -user user:erin")
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
