package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
)

// serve runs the gated MCP server on t until t's peer hangs up or ctx
// ends. With o.gatewayURL the calls go to that gateway; otherwise to a
// gate in this process on SQLite in a temporary directory, whose approval
// site it serves on o.siteAddr. Links and the catalog review go to log.
// onReady, when set, is called once the approval site listens.
func serve(ctx context.Context, o options, t mcp.Transport, log io.Writer, onReady func(origin string)) error {
	log = &syncWriter{w: log} // written by handlers and the site's goroutines too
	cfg := serverConfig{Principal: canon.Principal{User: o.user, Agent: o.agent}, Task: o.task, WaitTimeout: o.wait}
	if o.gatewayURL != "" {
		rt, err := remote.NewClient(o.gatewayURL, o.token, nil)
		if err != nil {
			return err
		}
		_, tools, reviews, err := confirmCatalog(seedUpstream(), seedEntries())
		if err != nil {
			return err
		}
		printReviews(log, reviews)
		cfg.OnPending = func(tk stepup.Ticket) {
			fmt.Fprintf(log, "waiting for approval of %s at the gateway (ticket %s)\n", tk.Tool, tk.ID)
		}
		return gatedServer(rt, tools, cfg).Run(ctx, t)
	}

	tmp, err := os.MkdirTemp("", "asu-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ln, err := net.Listen("tcp", o.siteAddr)
	if err != nil {
		return err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return err
	}
	// Browsers treat http://localhost as a secure context, so passkeys work
	// on one machine without TLS.
	rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:" + port, Name: "asu approvals"}
	lg, err := openGate(tmp, rp)
	if err != nil {
		return err
	}
	defer lg.Close()
	site, err := gateway.NewSite(lg.gate.Desk(), lg.enroll, rp, &gateway.SiteOptions{
		Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		return err
	}
	printReviews(log, lg.reviews)
	fmt.Fprintf(log, "approval site: %s (approvers only)\n", rp.Origin)
	if o.approver != "" {
		link, err := gateway.InviteLink(ctx, lg.enroll, rp.Origin, o.approver)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "enrollment link for %s (works once): %s\n", o.approver, link)
	}
	cfg.OnPending = func(tk stepup.Ticket) {
		fmt.Fprintf(log, "approval needed: %s\n", gateway.ApprovalLink(rp.Origin, tk.ID))
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var siteErr error
	wg.Go(func() { siteErr = gateway.Serve(ctx, gateway.NewServer(site, 0), ln); cancel() })
	if onReady != nil {
		onReady(rp.Origin)
	}
	err = gatedServer(lg.gate, lg.tools, cfg).Run(ctx, t)
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, siteErr)
}

func printReviews(w io.Writer, reviews []review) {
	fmt.Fprintln(w, "catalog review (upstream hints are suggestions; the catalog's classes stand):")
	for _, r := range reviews {
		fmt.Fprintln(w, "  "+r.String())
	}
}

// syncWriter serializes writes from the site's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
