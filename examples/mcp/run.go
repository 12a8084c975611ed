package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// ready is what a test learns once the gateway serves.
type ready struct {
	Site string // the approval site's origin (empty with -gateway)
	Host string // the host endpoint's URL, with -listen
	// The in-process gate's sides, for a test playing the approver.
	gate   *gate.Gate
	enroll *passkey.Enrollment
	store  gateStore
}

// upstreamOf connects to the upstream the options name: a command, a
// URL, or (neither) the built-in one in dir. It returns the catalog to
// use with it and the resolver of its path references: confined to
// -root, relative names against -upstream-dir, "~" as the command's
// HOME.
func upstreamOf(ctx context.Context, o options, dir string, log io.Writer) (*mcpgate.Upstream, *mcpgate.Catalog, mcpgate.PathResolver, *seedServer, error) {
	var dial mcpgate.Dialer
	var seed *seedServer
	paths := mcpgate.PathResolver{Root: o.root, Base: o.upstreamDir}
	switch {
	case len(o.upstreamCmd) > 0 && o.upstreamURL != "":
		return nil, nil, paths, nil, fmt.Errorf("%w: name an upstream command or -upstream-url, not both", stepup.ErrConfig)
	case len(o.upstreamCmd) > 0:
		dial = mcpgate.Command(log, o.upstreamCmd[0], o.upstreamCmd[1:]...)
		// The command inherits this environment, so its home directory is
		// ours (a Node server reads HOME). A server reached by URL has a
		// home nobody here knows: "~" names are then refused.
		paths.Home = os.Getenv("HOME")
	case o.upstreamURL != "":
		dial = mcpgate.HTTP(o.upstreamURL, nil)
	default:
		files := filepath.Join(dir, "files")
		if err := os.MkdirAll(files, 0o700); err != nil {
			return nil, nil, paths, nil, err
		}
		var err error
		if seed, err = newSeedServer(files); err != nil {
			return nil, nil, paths, nil, err
		}
		dial = seed.dial
		paths = mcpgate.PathResolver{Root: files, Base: files} // it reads names under files
	}
	up, err := mcpgate.Connect(ctx, dial, &mcpgate.UpstreamOptions{
		Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		return nil, nil, paths, nil, err
	}
	if o.printCatalog {
		return up, nil, paths, seed, nil
	}
	raw := seedCatalog
	if o.catalog != "" {
		if raw, err = os.ReadFile(o.catalog); err != nil {
			_ = up.Close()
			return nil, nil, paths, nil, err
		}
	} else if seed == nil {
		_ = up.Close()
		return nil, nil, paths, nil, fmt.Errorf("%w: -catalog FILE is needed with an upstream (-print-catalog prints a starting one)", stepup.ErrConfig)
	}
	cat, err := mcpgate.ParseCatalog(bytes.NewReader(raw))
	if err != nil {
		_ = up.Close()
		return nil, nil, paths, nil, err
	}
	return up, cat, paths, seed, nil
}

// printCatalog writes a starting catalog for the upstream's tools to out.
func printCatalog(ctx context.Context, o options, out, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "asu-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.printCatalog = true
	up, _, _, _, err := upstreamOf(ctx, o, tmp, log)
	if err != nil {
		return err
	}
	defer up.Close()
	raw, err := mcpgate.StarterCatalog(time.Now().UTC().Format("2006-01-02")+".1", up.Tools(), o.trustHints)
	if err != nil {
		return err
	}
	_, err = out.Write(raw)
	return err
}

// review prints the upstream's hints next to the catalog's classes.
func review(w io.Writer, up *mcpgate.Upstream, cat *mcpgate.Catalog) {
	fmt.Fprintln(w, "catalog review (upstream hints are suggestions; the catalog's classes stand):")
	for _, t := range up.Tools() {
		suggested, confirmed := mcpgate.SuggestClass(t.Annotations), cat.Class(t.Name)
		switch {
		case confirmed == "":
			fmt.Fprintf(w, "  %s: upstream suggests %s; not in the catalog, so every call is denied\n", t.Name, suggested)
		case confirmed != suggested:
			fmt.Fprintf(w, "  %s: upstream suggests %s; the catalog says %s (kept)\n", t.Name, suggested, confirmed)
		default:
			fmt.Fprintf(w, "  %s: %s, as upstream suggests\n", t.Name, confirmed)
		}
	}
}

// run serves the gateway until the host hangs up (stdio) or ctx ends.
// host is the stdio transport; with o.listen it serves streamable HTTP
// instead. Links, the review and warnings go to log.
func run(ctx context.Context, o options, host mcp.Transport, log io.Writer, onReady func(ready)) error {
	log = &syncWriter{w: log} // written by handlers and the site's goroutines too
	tmp, err := os.MkdirTemp("", "asu-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	up, cat, paths, _, err := upstreamOf(ctx, o, tmp, log)
	if err != nil {
		return err
	}
	defer up.Close()
	review(log, up, cat)
	pol, err := cat.Policy(up.Tools())
	if err != nil {
		return err
	}
	principal := canon.Principal{User: o.user, Agent: o.agent}
	popts := &mcpgate.Options{Task: o.task, WaitTimeout: o.wait, ProgressInterval: o.progress,
		SessionIdleTimeout: o.sessionIdle, MaxSessions: o.maxSessions,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	var siteErr error
	var rt stepup.Runtime
	r := ready{}

	if o.gatewayURL != "" {
		client, err := remote.NewClient(o.gatewayURL, o.token, nil)
		if err != nil {
			return err
		}
		if err := mcpgate.Probe(ctx, client, principal); err != nil {
			return fmt.Errorf("gateway %s: %w (its runtime token must act for -agent %s and -user %s)", o.gatewayURL, err, o.agent, o.user)
		}
		rt = client
		if o.siteOrigin != "" {
			popts.ApprovalLink = func(id stepup.TicketID) string { return gateway.ApprovalLink(o.siteOrigin, id) }
		}
		popts.OnPending = func(tk stepup.Ticket) {
			fmt.Fprintf(log, "waiting for approval of %s at the gateway (ticket %s)\n", tk.Tool, tk.ID)
		}
	} else {
		// The host is shown the schemas this gate checks, whatever the
		// upstream lists later, until a restart admits the new listing.
		popts.EnforcedSchema = pol.Schema
		ln, err := net.Listen("tcp", o.siteAddr)
		if err != nil {
			return err
		}
		defer ln.Close()
		_, port, err := net.SplitHostPort(ln.Addr().String())
		if err != nil {
			return err
		}
		// Browsers treat http://localhost as a secure context, so passkeys
		// work on one machine without TLS.
		rp := passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:" + port, Name: "asu approvals"}
		lg, err := openGate(o.db, rp, pol, paths, up, cat,
			append([]gate.Option{gate.WithDwell(o.dwell, card.ClassExternal, card.ClassIrreversible)}, o.gateOptions...)...)
		if err != nil {
			return err
		}
		defer lg.Close()
		// The site reads the gate's tickets, so the page of one that can
		// no longer be decided says what became of it: withdrawn by the
		// host, timed out, declined, denied or run.
		site, err := gateway.NewSite(lg.gate.Desk(), lg.enroll, rp, &gateway.SiteOptions{
			Logger: slog.New(slog.NewTextHandler(log, nil)), Tickets: lg.gate})
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "approval site: %s (approvers only)\n", rp.Origin)
		if o.approver != "" {
			link, err := gateway.InviteLink(ctx, lg.enroll, rp.Origin, o.approver)
			if err != nil {
				return err
			}
			fmt.Fprintf(log, "enrollment link for %s (works once): %s\n", o.approver, link)
		}
		rt = lg.gate
		popts.ApprovalLink = func(id stepup.TicketID) string { return gateway.ApprovalLink(rp.Origin, id) }
		popts.OnPending = func(tk stepup.Ticket) {
			fmt.Fprintf(log, "approval needed: %s\n", gateway.ApprovalLink(rp.Origin, tk.ID))
		}
		wg.Go(func() { siteErr = gateway.Serve(ctx, gateway.NewServer(site, 0), ln); cancel() })
		r.Site, r.gate, r.enroll, r.store = rp.Origin, lg.gate, lg.enroll, lg.st
	}

	proxy, err := mcpgate.NewProxy(rt, principal, up, cat.Class, popts)
	if err != nil {
		return err
	}
	if o.listen == "" {
		if onReady != nil {
			onReady(r)
		}
		err = proxy.Run(ctx, host)
	} else {
		err = serveHTTP(ctx, o, proxy, log, r, onReady)
	}
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, siteErr)
}

// serveHTTP serves the proxy over streamable HTTP on o.listen at /mcp,
// for hosts presenting o.hostToken, until ctx ends.
func serveHTTP(ctx context.Context, o options, proxy *mcpgate.Proxy, log io.Writer, r ready, onReady func(ready)) error {
	h, err := proxy.HTTPHandler(o.hostToken)
	if err != nil {
		return fmt.Errorf("%w (set ASU_MCP_TOKEN to a random string of at least %d bytes)", err, mcpgate.MinTokenBytes)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	r.Host = "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(log, "MCP endpoint for hosts: %s (Authorization: Bearer $ASU_MCP_TOKEN)\n", r.Host)
	if onReady != nil {
		onReady(r)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// localGate is an asu gate in this process, on memory or an SQLite file.
type localGate struct {
	gate   *gate.Gate
	enroll *passkey.Enrollment
	st     gateStore
}

// gateStore is what the local gate keeps its records in.
type gateStore interface {
	store.Store
	Close() error
}

// openGate builds the gate deciding with pol, its records in the SQLite
// file db or, when db is "", in memory; path references are bound by
// paths (when it has a root) and every admitted tool runs on the
// upstream.
//
// In memory is the default because the records then live exactly as long
// as the process, as the temporary file they were kept in before did:
// that file was deleted at exit, yet each allowed call paid for three
// commits synced to its disk (the decision and its audit row, the consume,
// the outcome and its row), most of the time of an allowed read. Every
// decision still has its audit row. A file (-db) keeps approvals, audit
// and enrolled passkeys across restarts, and syncs every commit.
func openGate(db string, rp passkey.RelyingParty, pol plug.Policy, paths mcpgate.PathResolver, up *mcpgate.Upstream, cat *mcpgate.Catalog, opts ...gate.Option) (*localGate, error) {
	var st gateStore = memory.New(nil)
	if db != "" {
		file, err := sqlite.Open(context.Background(), db, nil)
		if err != nil {
			return nil, err
		}
		st = file
	}
	lg := &localGate{st: st}
	if paths.Root != "" {
		paths.Next = canon.FileResolver{Root: paths.Root}
		opts = append([]gate.Option{gate.WithResolver(paths)}, opts...) // a test's own comes after
	}
	for _, t := range cat.Tools {
		opts = append(opts, gate.WithExecutor(t.Name, up.Executor()))
	}
	approver, err := passkey.New(st, rp)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	if lg.gate, err = gate.New(st, pol, approver, opts...); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	if lg.enroll, err = passkey.NewEnrollment(st, rp); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	return lg, nil
}

// Close closes the store.
func (lg *localGate) Close() error { return lg.st.Close() }

// syncWriter serializes writes from the handlers' and the site's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
