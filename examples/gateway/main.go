// Command gateway runs the asu approval service on one machine: the agent
// API (JSON over HTTP for runtimes in any language; Go runtimes use
// gateway.Client) on one listener, and the approval site (cards, passkey
// approve and deny, enrollment) on another, with the reference program's catalog on an
// embedded SQLite store.
//
//	go run ./examples/gateway
//
// It prints an enrollment link for the approver (open it in a browser to
// create a passkey), a bearer token for the runtime, and the two base
// URLs. Each call that needs approval prints its approval link. Ctrl-C
// shuts both listeners down gracefully.
//
// The approval site is http://localhost:PORT by default, which browsers
// treat as a secure context, so passkeys work without TLS on one machine.
// Anywhere else, put it behind TLS and pass -origin https://approve.example.com.
//
// Invites are minted only here, never over HTTP: -invite USER mints one
// more for an existing database, prints its link and exits. -audit FILE
// exports the database's audit chain for a third party (check it with
// `go run ./examples/verify audit FILE`) and prints the approval figures
// to watch for fatigue.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	var o options
	flag.StringVar(&o.agentAddr, "agent-addr", "127.0.0.1:8700", "listen `address` of the agent API")
	flag.StringVar(&o.siteAddr, "site-addr", "127.0.0.1:8701", "listen `address` of the approval site")
	flag.StringVar(&o.origin, "origin", "", "approval site `origin` (default http://localhost:PORT of -site-addr)")
	flag.StringVar(&o.db, "db", "", "SQLite `file` (default: asu.db in a new temporary directory)")
	flag.StringVar(&o.files, "files", "", "`directory` that file references resolve in (default: a temporary one holding q3.csv)")
	flag.StringVar(&o.approver, "approver", "user:dana", "`user` to print an enrollment link for at start (empty: none)")
	flag.StringVar(&o.agent, "agent", "agent:reports", "agent `principal` the printed runtime token acts as")
	flag.StringVar(&o.user, "user", "user:dana", "`user` the printed runtime token acts for")
	flag.StringVar(&o.invite, "invite", "", "mint an enrollment invite for `user`, print its link and exit")
	flag.StringVar(&o.audit, "audit", "", "export the audit chain to `FILE` (JSON Lines), print the approval figures and exit")
	flag.Parse()
	o.log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}
