package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// options are the command's flags.
type options struct {
	demo       bool
	siteAddr   string
	user       string
	agent      string
	task       string
	approver   string
	wait       time.Duration
	gatewayURL string
	token      string // the gateway's runtime token, from the environment
}

func main() {
	var o options
	flag.BoolVar(&o.demo, "demo", false, "run an in-memory MCP client against the server and print what happens")
	flag.StringVar(&o.siteAddr, "site-addr", "127.0.0.1:8711", "listen `address` of the approval site")
	flag.StringVar(&o.user, "user", "user:dana", "`user` every call acts for")
	flag.StringVar(&o.agent, "agent", "agent:mcp", "agent `principal` every call is made by")
	flag.StringVar(&o.task, "task", "mcp", "`task` recorded with every call")
	flag.StringVar(&o.approver, "approver", "user:dana", "`user` to print an enrollment link for at start (empty: none)")
	flag.DurationVar(&o.wait, "wait", 5*time.Minute, "how long a call waits for an approver")
	flag.StringVar(&o.gatewayURL, "gateway", "", "agent API `URL` of an asu gateway to use instead of the in-process gate (token in ASU_RUNTIME_TOKEN)")
	flag.Parse()
	o.token = os.Getenv("ASU_RUNTIME_TOKEN")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if o.demo {
		err = demo(ctx, os.Stdout)
	} else {
		// Stdout is the protocol's channel; everything for people goes to stderr.
		err = serve(ctx, o, &mcp.StdioTransport{}, os.Stderr, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}
