// Command gateway runs the asu approval service: the agent API (JSON over
// HTTP for runtimes in any language; Go runtimes use remote.Client) on one
// listener, and the approval site (cards, passkey approve, deny and
// revoke, enrollment) on another, with the reference program's catalog.
//
//	go run ./examples/gateway                      # a demo on a temporary SQLite file
//	go run ./examples/gateway -db asu.db -key-file gate.key -tokens tokens.json
//
// At start it prints, step by step, what to do next with commands that
// work as printed: the enrollment link for the approver, the runtime's
// token, and curl commands that propose, wait and execute. Each call that
// needs approval prints its approval link. Ctrl-C shuts both listeners
// down gracefully. See README.md beside this file.
//
// # Catalog
//
// -catalog FILE decides with a catalog file (the format of
// stepup/catalog: tools, limits, approver groups, quorum, executors);
// without it, the reference program's catalog decides. The policy version
// is printed at start.
//
//	go run ./examples/gateway policy test -catalog FILE [-tests FILE]
//	go run ./examples/gateway policy diff OLD NEW
//
// policy test runs the catalog's test file (default: FILE with .test
// before its extension) and exits non-zero on any case that does not get
// the decision it wants; policy diff shows what changes between two
// catalogs.
//
// # Store and replicas
//
// -db FILE keeps everything in one SQLite file (one machine; several
// gateway processes may share it). -postgres DSN uses PostgreSQL, shared
// by any number of replicas behind a load balancer. Give one of them;
// with neither, a temporary SQLite file is removed at exit. Replicas
// sharing a store share:
//
//   - -key-file FILE, the gate's MAC key (32 bytes or more; created, mode
//     0600, if missing). Without it each replica draws its own, and a call
//     the policy allowed runs only on the replica that allowed it. The key
//     also seals the passkeys the site enrolls; only sealed ones approve.
//   - -tokens FILE, the runtime tokens by SHA-256, with the agent and users
//     each acts for. Created on first start with one new token, printed
//     once; after that the file holds only hashes, so tokens survive
//     restarts and work on every replica.
//
// -instance NAME names the replica as the owner of its executions
// (default random). Every replica recovers continuously: it takes over
// executions whose owner's lease expired (the owner crashed) and re-runs
// them with the same idempotency key, and it times out stale tickets.
//
// # Watermark
//
// With -db FILE and a key (-key-file or -keys), the gateway keeps its
// watermark in FILE.mark (or -watermark FILE; one file a replica, out of
// the database's backups): a store restored from a backup, or otherwise
// behind what the gateway had seen, is held until
//
//	go run ./examples/gateway watermark -db asu.db -key-file gate.key
//	go run ./examples/gateway reconcile -db asu.db -key-file gate.key -by operator:erin
//
// have shown what went back and held every call that may have run.
//
// # Origin
//
// The approval site is http://localhost:PORT by default, which browsers
// treat as a secure context, so passkeys work without TLS on one machine.
// Passkeys are bound to that origin: a page opened at 127.0.0.1 says so
// and links to localhost. Anywhere else, put the site behind TLS and pass
// -origin https://approve.example.com.
//
// # Admin commands
//
// They work against the store while the gateway runs, and start no
// server; each prints what it did in one line (admin.go):
//
//	go run ./examples/gateway invite -db asu.db -user user:erin
//	go run ./examples/gateway approvers -db asu.db
//	go run ./examples/gateway revoke-passkey -db asu.db -id ID
//	go run ./examples/gateway revoke-invite -db asu.db -invite LINK
//	go run ./examples/gateway tickets -db asu.db -state pending,approved
//	go run ./examples/gateway revoke-approval -db asu.db -ticket ID
//	go run ./examples/gateway revoke-grant -db asu.db -grant ID
//	go run ./examples/gateway audit -db asu.db -out audit.jsonl
//	go run ./examples/gateway -db asu.db -audit audit.jsonl -checkpoint-key checkpoint.pem
//	go run ./examples/gateway backup -db asu.db -to asu-backup.db
//	go run ./examples/gateway integrity -db asu.db
//
// invite mints an enrollment invite and prints its link. backup writes a
// consistent copy of the SQLite file; integrity checks a store end to end
// and exits non-zero when it is damaged. -audit exports
// the audit chain (JSON Lines) and prints the approval figures to watch
// for fatigue; with -checkpoint-key (ed25519, PEM; created if missing, its
// public half written to FILE.pub) it also writes a checkpoint of the
// chain's head signed by the gate, for
//
//	go run ./examples/verify audit audit.jsonl --checkpoint audit.jsonl.checkpoint.json --gate-key checkpoint.pem.pub
//
// # The team's tools
//
// -tool-url TOOL=URL runs TOOL's approved calls by a signed POST to URL
// (package httpexec), with the secret in -tool-secret-file; -webhook URL
// with -webhook-secret-file notifies approvers (package notify).
//
// # Metrics and logs
//
// -metrics ADDR (or unix:PATH) serves the gate's metrics for Prometheus
// at http://ADDR/metrics, on a listener of its own (never the agent API's
// or the approval site's), behind the bearer token of
// -operator-token-file: decisions by kind and effect class, pending
// tickets, time to decision, flood refusals and lockouts, executions by
// outcome, lease recoveries. The service log (standard error) has one
// line per decision, by tool, ticket and digest, never by argument.
//
// # Dwell time
//
// An approval of an external or irreversible call sooner than -dwell
// (default 3s) after its card was first shown is refused, and the page
// asks the approver to read the card and approve again; the inbox page
// holds its approve button as long. -dwell 0 turns it off.
//
// # Denials
//
// A denied call is answered at once and is final; it is not stored as a
// ticket (its audit row is the record), so waiting on or executing its id
// answers not_found with a message that says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentstepup/asu/stepup/gate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// cli runs the command line args: an admin command (admin.go), or the
// gateway.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if cmd, ok := adminCommands[args[0]]; ok {
			return cmd(ctx, stdout, args[1:])
		}
	}
	if len(args) > 0 && args[0] == "policy" {
		return runPolicy(ctx, stdout, stderr, args[1:])
	}
	if len(args) > 0 && args[0] == "keys" {
		return runKeys(stdout, args[1:], time.Now)
	}
	if len(args) > 0 && args[0] == "backup" {
		return runBackup(ctx, stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "integrity" {
		return runIntegrity(ctx, stdout, args[1:])
	}
	var o options
	fs := flags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (the commands are %s)", fs.Args(), commandNames())
	}
	o.log = stderr
	return run(ctx, stdout, o, nil)
}

// flags are the gateway's flags, parsed into o.
func flags(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.agentAddr, "agent-addr", "127.0.0.1:8700", "listen `address` of the agent API")
	fs.StringVar(&o.siteAddr, "site-addr", defaultSiteAddr, "listen `address` of the approval site")
	fs.StringVar(&o.origin, "origin", "", "approval site `origin` (default http://localhost:PORT of -site-addr)")
	fs.StringVar(&o.db, "db", "", "SQLite `file` (default: asu.db in a new temporary directory)")
	fs.StringVar(&o.postgres, "postgres", "", "PostgreSQL `DSN`, shared by replicas (instead of -db)")
	fs.StringVar(&o.catalog, "catalog", "", "catalog `file` the gateway decides with (default: the reference program's; see stepup/catalog)")
	fs.StringVar(&o.files, "files", "", "`directory` that file references resolve in (default: a temporary one holding q3.csv)")
	fs.StringVar(&o.approver, "approver", "user:dana", "`user` to print an enrollment link for at start (empty: none)")
	fs.StringVar(&o.agent, "agent", "agent:reports", "agent `principal` a new runtime token acts as")
	fs.StringVar(&o.user, "user", "user:dana", "`user` a new runtime token acts for")
	fs.StringVar(&o.keyFile, "key-file", "", "the gate's MAC key `file`, shared by replicas (created if missing)")
	fs.StringVar(&o.watermark, "watermark", "", "the watermark `file` this replica keeps outside the store (default with -db and a key: FILE.mark; see reconcile)")
	fs.Var((*multiFlag)(&o.markPeers), "watermark-peer", "another replica's watermark `file`, read at start (repeatable; with -db, FILE.mark and FILE.*.mark beside it are read without it)")
	fs.StringVar(&o.keys, "keys", "", "key ring `file` for MACs and passkey seals, shared by replicas, re-read every 5s (created if missing; see keys rotate)")
	fs.StringVar(&o.tokens, "tokens", "", "runtime tokens `file`, by hash (created with a new token if missing)")
	fs.StringVar(&o.instance, "instance", "", "this replica's `name` as the owner of its executions (default random)")
	fs.StringVar(&o.checkpointKey, "checkpoint-key", "", "ed25519 PEM `file` that signs audit checkpoints with -audit (created if missing)")
	fs.StringVar(&o.metrics, "metrics", "", "listen `address` of the Prometheus metrics endpoint, a listener of its own (default: none)")
	fs.DurationVar(&o.dwell, "dwell", gate.DefaultDwell, "least `time` between an approver first seeing an external or irreversible call's card and approving it (0: none)")
	fs.StringVar(&o.audit, "audit", "", "export the audit chain to `FILE` (JSON Lines), print the approval figures and exit")
	serviceFlags(fs, &o.svc)
	return fs
}
