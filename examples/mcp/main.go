package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// options are the command's flags.
type options struct {
	demo         bool
	printCatalog bool
	trustHints   bool
	catalog      string
	upstreamURL  string
	upstreamCmd  []string // the arguments after the flags
	root         string
	db           string // the gate's SQLite file; "" keeps its records in memory
	upstreamDir  string // where the upstream resolves relative paths
	listen       string
	siteAddr     string
	user         string
	agent        string
	task         string
	approver     string
	wait         time.Duration
	progress     time.Duration
	sessionIdle  time.Duration
	maxSessions  int
	dwell        time.Duration // least time from showing a card to approving it
	gatewayURL   string
	siteOrigin   string
	token        string        // the gateway's runtime token, from ASU_RUNTIME_TOKEN
	hostToken    string        // the hosts' bearer token, from ASU_MCP_TOKEN
	gateOptions  []gate.Option // tests only: more options of the in-process gate
}

// defaultAgent is the agent principal of the gateway example's runtime
// token too, so the two agree without flags.
const defaultAgent = "agent:reports"

func main() {
	if os.Getenv("GOGC") == "" {
		// The MCP SDK's JSON reader allocates tens of kilobytes for each
		// message it reads, and the gateway reads every call several
		// times over; on a live heap of a few megabytes the collector
		// would run every few calls. Collect at five times the live heap.
		debug.SetGCPercent(400)
	}
	var o options
	flag.BoolVar(&o.demo, "demo", false, "run an in-memory host against the built-in upstream and print what happens")
	flag.BoolVar(&o.printCatalog, "print-catalog", false, "print a starting catalog for the upstream's tools (every tool irreversible) and exit")
	flag.BoolVar(&o.trustHints, "trust-hints", false, "with -print-catalog: start from the worst reading of the upstream's hints")
	flag.StringVar(&o.catalog, "catalog", "", "catalog `file` (JSON) admitting upstream tools; required with an upstream")
	flag.StringVar(&o.upstreamURL, "upstream-url", "", "streamable HTTP `URL` of the upstream MCP server (or give its command after the flags)")
	flag.StringVar(&o.root, "root", "", "`directory` calls may touch: a \"path\" reference is resolved as the upstream resolves it, refused unless it lies under this directory, and its content bound")
	flag.StringVar(&o.db, "db", "", "SQLite `file` keeping the gate's records (approvals, audit, passkeys) across restarts, every commit synced; default: in memory, gone at exit")
	flag.StringVar(&o.upstreamDir, "upstream-dir", "", "`directory` the upstream resolves relative paths against (server-filesystem: the first directory it is given); without it a relative \"path\" reference is refused")
	flag.StringVar(&o.listen, "listen", "", "serve hosts over streamable HTTP on `address` at /mcp (bearer token in ASU_MCP_TOKEN) instead of stdio")
	flag.StringVar(&o.siteAddr, "site-addr", "127.0.0.1:8711", "listen `address` of the approval site")
	flag.DurationVar(&o.dwell, "dwell", gate.DefaultDwell, "least `time` between an approver first seeing an external or irreversible call's card and approving it (0: none)")
	flag.StringVar(&o.user, "user", "user:dana", "`user` every call acts for")
	flag.StringVar(&o.agent, "agent", defaultAgent, "agent `principal` every call is made by")
	flag.StringVar(&o.task, "task", mcpgate.DefaultTask, "`task` recorded with every call")
	flag.StringVar(&o.approver, "approver", "user:dana", "`user` to print an enrollment link for at start (empty: none)")
	flag.DurationVar(&o.wait, "wait", mcpgate.DefaultWaitTimeout, "how long a call waits for an approver")
	flag.DurationVar(&o.progress, "progress", mcpgate.DefaultProgressInterval, "interval of progress notifications while a call waits")
	flag.DurationVar(&o.sessionIdle, "session-idle", mcpgate.DefaultSessionIdleTimeout, "with -listen: close a host session that sent nothing for this `long`")
	flag.IntVar(&o.maxSessions, "max-sessions", mcpgate.DefaultMaxSessions, "with -listen: host sessions open at once; more are refused (503)")
	flag.StringVar(&o.gatewayURL, "gateway", "", "agent API `URL` of an asu gateway to use instead of the in-process gate (token in ASU_RUNTIME_TOKEN)")
	flag.StringVar(&o.siteOrigin, "site-origin", "", "with -gateway: `origin` of the gateway's approval site, for the links sent to the person")
	flag.Parse()
	o.upstreamCmd = flag.Args()
	o.token = os.Getenv("ASU_RUNTIME_TOKEN")
	o.hostToken = os.Getenv("ASU_MCP_TOKEN")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case o.demo:
		err = demo(ctx, os.Stdout)
	case o.printCatalog:
		err = printCatalog(ctx, o, os.Stdout, os.Stderr)
	default:
		// Stdout is the protocol's channel; everything for people goes to stderr.
		err = run(ctx, o, &mcp.StdioTransport{}, os.Stderr, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}
