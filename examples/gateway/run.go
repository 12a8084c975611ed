package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/store/sqlite"
)

// options are the command's flags.
type options struct {
	agentAddr, siteAddr string
	origin              string
	db, files           string
	approver, agent     string
	user                string
	invite              string
	audit               string    // export the audit chain to this file and exit
	log                 io.Writer // service log (stderr)
}

// ready, when not nil, receives what run printed once both listeners
// serve (for tests).
type ready func(started)

// started is what a running gateway tells its operator.
type started struct {
	AgentURL, SiteURL string
	Origin            string
	InviteLink        string
	Token             string
}

// run starts the gateway and serves until ctx ends.
func run(ctx context.Context, w io.Writer, o options, onReady ready) error {
	out := &syncWriter{w: w}
	if o.invite != "" && o.db == "" {
		return errors.New("-invite needs -db: an invite is stored in the database the gateway serves")
	}
	if o.audit != "" {
		if o.db == "" {
			return errors.New("-audit needs -db: the audit chain is in the database the gateway serves")
		}
		if _, err := os.Stat(o.db); err != nil {
			return err // never create an empty database to export
		}
		st, err := sqlite.Open(ctx, o.db, nil)
		if err != nil {
			return err
		}
		defer st.Close()
		return exportAudit(ctx, st, o.audit, out) // no listener, no gate
	}
	tmp := ""
	if o.db == "" || o.files == "" {
		d, err := os.MkdirTemp("", "asu-gateway-")
		if err != nil {
			return err
		}
		tmp = d
		fmt.Fprintf(out, "data directory: %s (removed at exit)\n", d)
		defer os.RemoveAll(d)
	}
	if o.db == "" {
		o.db = filepath.Join(tmp, "asu.db")
	}
	if o.files == "" {
		o.files = filepath.Join(tmp, "files")
		if err := os.Mkdir(o.files, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(o.files, "q3.csv"), []byte("region,revenue\nwest,410\neast,385\n"), 0o600); err != nil {
			return err
		}
	}

	siteLn, err := net.Listen("tcp", o.siteAddr)
	if err != nil {
		return err
	}
	defer siteLn.Close()
	rp, err := relyingParty(o.origin, siteLn.Addr())
	if err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, o.db, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	cat, err := seedCatalog()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(&syncWriter{w: o.log}, nil))
	exec := &outbox{out: out}
	gopts := []gate.Option{gate.WithResolver(canon.FileResolver{Root: o.files})}
	for _, tool := range []string{"read_file", "search_tickets", "write_draft", "send_email", "issue_refund"} {
		gopts = append(gopts, gate.WithExecutor(tool, exec))
	}
	approver, err := passkey.New(st, rp)
	if err != nil {
		return err
	}
	gate, err := gate.New(st, cat, approver, gopts...)
	if err != nil {
		return err
	}
	enroll, err := passkey.NewEnrollment(st, rp)
	if err != nil {
		return err
	}
	if o.invite != "" {
		link, err := gateway.InviteLink(ctx, enroll, rp.Origin, o.invite)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "enrollment link for %s (works once): %s\n", o.invite, link)
		return nil
	}
	if _, err := gate.Recover(ctx); err != nil {
		return fmt.Errorf("recover interrupted executions: %w", err)
	}

	token, err := gateway.NewRuntimeToken()
	if err != nil {
		return err
	}
	api, err := gateway.NewAgentAPI(notifying{gate, rp.Origin, out},
		[]gateway.RuntimeToken{{Token: token, Agent: o.agent, Users: []string{o.user}}}, &gateway.AgentOptions{Logger: log})
	if err != nil {
		return err
	}
	site, err := gateway.NewSite(gate.Desk(), enroll, rp, &gateway.SiteOptions{Logger: log})
	if err != nil {
		return err
	}
	agentLn, err := net.Listen("tcp", o.agentAddr)
	if err != nil {
		return err
	}
	defer agentLn.Close()

	s := started{AgentURL: "http://" + agentLn.Addr().String(), SiteURL: rp.Origin, Origin: rp.Origin, Token: token}
	if o.approver != "" {
		if s.InviteLink, err = gateway.InviteLink(ctx, enroll, rp.Origin, o.approver); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "store: %s\n", o.db)
	fmt.Fprintf(out, "agent API:     %s  (runtimes only)\n", s.AgentURL)
	fmt.Fprintf(out, "approval site: %s  (approvers only; relying party %q)\n", s.SiteURL, rp.ID)
	if s.InviteLink != "" {
		fmt.Fprintf(out, "enrollment link for %s (works once): %s\n", o.approver, s.InviteLink)
	}
	fmt.Fprintf(out, "runtime token for %s: %s\n", o.agent, token)
	fmt.Fprintf(out, "try: curl -s -H 'Authorization: Bearer %s' -d '%s' %s/v1/propose\n", token, exampleCall(o), s.AgentURL)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = gateway.Serve(ctx, gateway.NewServer(api, api.MaxWait()), agentLn); cancel() })
	wg.Go(func() { errs[1] = gateway.Serve(ctx, gateway.NewServer(site, 0), siteLn); cancel() })
	if onReady != nil {
		onReady(s)
	}
	wg.Wait()
	fmt.Fprintln(out, "gateway stopped")
	return errors.Join(errs...)
}

// relyingParty is the approval site's WebAuthn identity: the origin given,
// or http://localhost:PORT of the site's listener.
func relyingParty(origin string, addr net.Addr) (passkey.RelyingParty, error) {
	if origin == "" {
		_, port, err := net.SplitHostPort(addr.String())
		if err != nil {
			return passkey.RelyingParty{}, err
		}
		origin = "http://localhost:" + port
	}
	host := strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return passkey.RelyingParty{ID: host, Origin: strings.TrimSuffix(origin, "/"), Name: "asu approvals"}, nil
}

func exampleCall(o options) string {
	b, _ := json.Marshal(map[string]any{
		"tool": "send_email", "args": map[string]string{"to": "finance@example.com", "subject": "Q3 summary", "attachment": "q3.csv"},
		"task": "t-42", "session": "sess-1", "principal": map[string]string{"user": "user:dana", "agent": o.agent},
	})
	return string(b)
}

// notifying is the gate as the agent API sees it, printing the approval
// link of every call that waits for a person. A real deployment sends the
// link to the approver (mail, chat); it is only a link, never the card.
type notifying struct {
	*gate.Gate
	origin string
	out    io.Writer
}

func (n notifying) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	t, err := n.Gate.Propose(ctx, c)
	if err == nil && t.Status == stepup.StatusPending {
		fmt.Fprintf(n.out, "approval needed: %s\n", gateway.ApprovalLink(n.origin, t.ID))
	}
	return t, err
}

// outbox stands in for the real tools: it reports each execution by tool,
// digest and idempotency key, never by argument.
type outbox struct {
	out io.Writer
}

func (o *outbox) Execute(_ context.Context, e canon.Effect, key string) ([]byte, error) {
	d, err := e.Digest()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.out, "executed %s digest %s key %s\n", e.Tool, d.Short(), key)
	return json.Marshal(map[string]any{"ok": true, "tool": e.Tool})
}

// syncWriter serializes the lines that handlers and executors print.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
