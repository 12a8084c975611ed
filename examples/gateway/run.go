package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
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
	"time"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store"
)

// options are the command's flags, and a few hooks for tests.
type options struct {
	agentAddr, siteAddr string
	origin              string
	db, postgres        string // the store: one of them (neither: a temporary SQLite file)
	catalog             string // the catalog file (empty: the seed catalog)
	files               string
	approver, agent     string
	user                string
	keyFile             string        // the gate's MAC key, shared by replicas
	keys                string        // the key ring file (MACs and seals), shared by replicas
	watermark           string        // the watermark file, one a replica (see watermarkFile)
	markPeers           []string      // -watermark-peer: other replicas' watermark files, read at start
	tokens              string        // runtime tokens, by hash
	instance            string        // this replica's name
	checkpointKey       string        // ed25519 key that signs audit checkpoints
	audit               string        // export the audit chain to this file and exit
	metrics             string        // listen address of the Prometheus endpoint (empty: none)
	dwell               time.Duration // least time from showing a card to approving it (external, irreversible)
	observe             []gate.Option
	log                 io.Writer
	svc                 serviceOptions // HTTP tools, webhook, operator token (service.go)

	// Hooks for tests: the SQLite store's clock, the tools' executor, the
	// execution lease and how often maintenance runs (zero: defaults).
	clock         func() time.Time
	exec          plug.Executor
	tools         []policy.Tool // the catalog's tools (nil: the seed catalog's)
	lease         time.Duration
	maintainEvery time.Duration
	keysEvery     time.Duration // how often -keys is re-read (zero: keyReload)
}

// ready, when not nil, receives what run printed once both listeners
// serve (for tests).
type ready func(started)

// started is what a running gateway tells its operator.
type started struct {
	AgentURL, SiteURL string
	InboxURL          string // the approvers' inbox, on the site's origin
	Origin            string
	InviteLink        string
	Token             string // empty when the tokens file already existed
	Agent, User       string // whom the printed example call names
	MetricsURL        string // empty without -metrics
}

// run starts the gateway and serves until ctx ends; with -audit it
// exports the audit chain instead and returns.
func run(ctx context.Context, w io.Writer, o options, onReady ready) error {
	out := &syncWriter{w: w}
	if o.audit != "" {
		return runAudit(ctx, out, o)
	}
	tmp := ""
	if (o.db == "" && o.postgres == "") || o.files == "" {
		d, err := os.MkdirTemp("", "asu-gateway-")
		if err != nil {
			return err
		}
		tmp = d
		fmt.Fprintln(out, tempDirLine(o, d))
		defer os.RemoveAll(d)
	}
	if o.db == "" && o.postgres == "" {
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
	st, where, err := openStore(ctx, o.db, o.postgres, false, o.clock)
	if err != nil {
		return err
	}
	defer st.Close()
	siteLn, err := net.Listen("tcp", o.siteAddr)
	if err != nil {
		return err
	}
	defer siteLn.Close()
	rp, err := relyingParty(o.origin, siteLn.Addr())
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(&syncWriter{w: o.log}, nil))
	opToken, err := operatorToken(o.svc.operatorTokenFile)
	if err != nil {
		return err
	}
	metrics, metricsLn, metricsURL, err := listenMetrics(o, out)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		defer metricsLn.Close()
		o.observe = append(o.observe, gate.WithMeterProvider(metrics.MeterProvider()))
	}
	o.observe = append(o.observe, gate.WithLogger(log))
	o.watermark = watermarkFile(o)
	if o.watermark != "" {
		fmt.Fprintf(out, "watermark:     %s (keep it out of the database's backups; a store found behind it is held until reconcile)\n", o.watermark)
	} else if o.postgres != "" || o.keyFile != "" || o.keys != "" {
		fmt.Fprintln(out, "watermark:     none (-watermark FILE): a restored backup or a failover to a lagging standby would go unnoticed")
	}
	b, err := newGate(st, rp, o, out)
	if err != nil {
		return err
	}
	defer b.close(ctx)
	g, enroll := b.gate, b.enroll
	if b.keys != nil {
		defer watchKeys(ctx, o.keys, b.keys, o.log, cmp.Or(o.keysEvery, keyReload))()
	}
	if metrics != nil {
		// The operator's listener also shows the approval figures of the
		// last week, by class and by approver.
		metrics.ServeFigures(func(ctx context.Context) (figures.Report, error) {
			return g.Admin().Metrics(ctx, 7*24*time.Hour)
		}, gateway.FiguresWindow(7*24*time.Hour))
	}
	if o.checkpointKey != "" { // checked now, not first at an export
		_, pub, err := checkpointKey(o.checkpointKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "checkpoint key: %s (publish %s; exports with -audit are signed with it)\n", o.checkpointKey, pub)
	}
	tokens, fresh, err := runtimeTokens(o.tokens, o.agent, o.user)
	if err != nil {
		return err
	}
	agentLn, err := net.Listen("tcp", o.agentAddr)
	if err != nil {
		return err
	}
	defer agentLn.Close()
	agentURL := "http://" + agentLn.Addr().String()
	api, err := gateway.NewAgentAPI(notifying{g, rp.Origin, agentURL, out}, tokens, &gateway.AgentOptions{Logger: log})
	if err != nil {
		return err
	}
	approvals, err := newApprovalSite(b, rp, gateway.SiteOptions{Logger: log, Tickets: g, Key: b.key}, log)
	if err != nil {
		return err
	}

	s := started{AgentURL: agentURL, SiteURL: rp.Origin, Origin: rp.Origin, Token: fresh,
		Agent: tokens[0].Agent, User: tokens[0].Users[0], InboxURL: inbox.Link(rp.Origin, approvals.inbox.Prefix())}
	if metricsLn != nil {
		s.MetricsURL = metricsURL
	}
	if o.approver != "" {
		if s.InviteLink, err = gateway.InviteLink(ctx, enroll, rp.Origin, o.approver); err != nil {
			return err
		}
	}
	printStart(out, o, s, where)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	// Recovery is continuous: every replica takes over executions whose
	// owner's lease expired and times out stale tickets, so nothing waits
	// for a restart, and a peer finishing a ticket is never an error here.
	wg.Go(func() {
		_ = g.Maintain(ctx, o.maintainEvery, func(err error) { log.Warn("maintenance", "error", err.Error()) })
	})
	wg.Go(func() { errs[0] = gateway.Serve(ctx, gateway.NewServer(api, api.MaxWait()), agentLn); cancel() })
	wg.Go(func() { errs[1] = gateway.Serve(ctx, gateway.NewServer(approvals, 0), siteLn); cancel() })
	if metricsLn != nil {
		wg.Go(func() {
			errs[2] = gateway.Serve(ctx, gateway.NewServer(operatorAuth(opToken, metrics), 0), metricsLn)
			cancel()
		})
	}
	if onReady != nil {
		onReady(s)
	}
	wg.Wait()
	fmt.Fprintln(out, "gateway stopped")
	return errors.Join(errs...)
}

// built is what newGate builds: the gate, its passkey approver and
// enrollment, and the key from -key-file (nil without it).
type built struct {
	gate     *gate.Gate
	enroll   *passkey.Enrollment
	approver *passkey.Approver
	key      []byte
	keys     *keyring.Live   // the -keys ring, re-read while the gateway runs (nil without -keys)
	marks    *watermark.File // the watermark file, closed at exit (nil: none)
	hook     *notify.Webhook // -webhook's notifier, closed at exit (nil: none)
	dwell    time.Duration   // -dwell, which the inbox's page holds too
}

// newGate builds the gate, with its passkey approver and enrollment, on st.
func newGate(st store.Store, rp passkey.RelyingParty, o options, out io.Writer) (_ built, err error) {
	dec, err := loadCatalog(o.catalog, o.tools, out)
	if err != nil {
		return built{}, err
	}
	cat, names := dec.policy, dec.names
	var exec plug.Executor = &outbox{out: out}
	if o.exec != nil {
		exec = o.exec
	}
	o.svc.httpTools = append(o.svc.httpTools, dec.http...)
	if err := o.svc.resolve(names); err != nil {
		return built{}, err
	}
	remote, err := o.svc.executors()
	if err != nil {
		return built{}, err
	}
	gopts := append(append([]gate.Option{}, o.observe...), dec.opts...)
	if o.files != "" {
		gopts = append(gopts, gate.WithResolver(canon.FileResolver{Root: o.files}))
	}
	for _, tool := range names {
		if e, ok := remote[tool]; ok {
			gopts = append(gopts, gate.WithExecutor(tool, e))
			continue
		}
		gopts = append(gopts, gate.WithExecutor(tool, exec))
	}
	hook, err := o.svc.newWebhook()
	if err != nil {
		return built{}, err
	}
	defer func() {
		if err != nil && hook != nil { // its workers run: stop them
			closeWebhook(context.Background(), hook)
		}
	}()
	if hook != nil {
		gopts = append(gopts, gate.WithNotifier(hook, func(id stepup.TicketID) string { return gateway.ApprovalLink(rp.Origin, id) }))
	}
	var popts []passkey.Option
	var eopts []passkey.EnrollOption
	var key []byte
	if o.keyFile != "" {
		k, created, err := gateKey(o.keyFile)
		if err != nil {
			return built{}, err
		}
		key = k
		if created {
			fmt.Fprintf(out, "gate key: created %s (share it with every replica of this store)\n", o.keyFile)
		}
		gopts = append(gopts, gate.WithKey(key))
		// The same key seals the credentials this site enrolls, and only
		// sealed credentials approve.
		popts = append(popts, passkey.RequireSeal(key))
		eopts = append(eopts, passkey.WithSealKey(key))
	}
	var keys *keyring.Live
	if o.keys != "" { // the ring replaces -key-file's key for MACs and seals
		if keys, err = serviceKeys(o.keys, key, out); err != nil {
			return built{}, err
		}
		gopts = append(gopts, gate.WithKeyRing(keys))
		popts = append(popts, passkey.RequireSealKeyRing(keys, st))
		eopts = append(eopts, passkey.WithSealKeyRing(keys))
	}
	var marks *watermark.File
	if o.watermark != "" {
		var opt gate.Option
		if marks, opt, err = openWatermark(o.watermark, watermarkPeers(o)); err != nil {
			return built{}, err
		}
		defer func() {
			if err != nil {
				_ = marks.Close()
			}
		}()
		gopts = append(gopts, opt)
	}
	if o.instance != "" {
		gopts = append(gopts, gate.WithInstance(o.instance))
	}
	if o.lease > 0 {
		gopts = append(gopts, gate.WithLease(o.lease))
	}
	if o.clock != nil {
		gopts = append(gopts, gate.WithLocalClock(o.clock)) // a test's simulated time
	}
	gopts = append(gopts, gate.WithDwell(o.dwell, card.ClassExternal, card.ClassIrreversible))
	vig, err := o.svc.vig.options()
	if err != nil {
		return built{}, err
	}
	gopts = append(gopts, vig...)
	approver, err := passkey.New(st, rp, popts...)
	if err != nil {
		return built{}, err
	}
	g, err := gate.New(st, cat, approver, gopts...)
	if err != nil {
		return built{}, err
	}
	enroll, err := passkey.NewEnrollment(st, rp, eopts...)
	if err != nil {
		return built{}, err
	}
	return built{gate: g, enroll: enroll, approver: approver, key: key, keys: keys, marks: marks, hook: hook, dwell: o.dwell}, nil
}

// runAudit exports the audit chain of an existing store, signing a
// checkpoint of its head with -checkpoint-key.
func runAudit(ctx context.Context, out io.Writer, o options) error {
	if o.db == "" && o.postgres == "" {
		return errors.New("-audit needs -db or -postgres: the audit chain is in the database the gateway serves")
	}
	st, _, err := openStore(ctx, o.db, o.postgres, true, o.clock)
	if err != nil {
		return err
	}
	defer st.Close()
	var key ed25519.PrivateKey
	var pub string
	if o.checkpointKey != "" {
		if key, pub, err = checkpointKey(o.checkpointKey); err != nil {
			return err
		}
	}
	addr, err := net.ResolveTCPAddr("tcp", o.siteAddr)
	if err != nil {
		return fmt.Errorf("-site-addr: %w", err)
	}
	rp, err := relyingParty(o.origin, addr)
	if err != nil {
		return err
	}
	o.files = ""
	b, err := newGate(st, rp, o, io.Discard)
	if err != nil {
		return err
	}
	var ring keyring.Source
	if key == nil && b.keys != nil { // no -checkpoint-key: the -keys ring signs
		if pub, err = writePublicRing(o.keys, b.keys.Ring()); err != nil {
			return err
		}
		ring = b.keys
	}
	if err := exportAudit(ctx, st, b.gate.Admin(), key, ring, o.audit, out); err != nil {
		return err
	}
	if key != nil || ring != nil {
		fmt.Fprintf(out, "verify: go run ./examples/verify audit %s --checkpoint %s.checkpoint.json --gate-key %s\n", o.audit, o.audit, pub)
	} else {
		fmt.Fprintf(out, "verify: go run ./examples/verify audit %s\n", o.audit)
	}
	return nil
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

// exampleCall is the send_email call the start-up output proposes.
func exampleCall(agent, user string) string {
	b, _ := json.Marshal(map[string]any{
		"tool": "send_email", "args": map[string]string{"to": "finance@example.com", "subject": "Q3 summary", "attachment": "q3.csv"},
		"task": "t-42", "session": "sess-1", "principal": map[string]string{"user": user, "agent": agent},
	})
	return string(b)
}

// notifying is the gate as the agent API sees it, printing the approval
// link of every call that waits for a person, and the commands that wait
// for and execute it. A real deployment sends the link to the approver
// (mail, chat); it is only a link, never the card.
type notifying struct {
	*gate.Gate
	origin, agentURL string
	out              io.Writer
}

func (n notifying) Propose(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	t, err := n.Gate.Propose(ctx, c)
	if err == nil && t.Status == stepup.StatusPending {
		wait, exec := ticketCommands(n.agentURL, t.ID)
		fmt.Fprintf(n.out, "approval needed: %s\n  then wait:  %s\n  and run:    %s\n",
			gateway.ApprovalLink(n.origin, t.ID), wait, exec)
	}
	return t, err
}

// Execute runs ticket id, telling its executor which ticket it runs (an
// HTTP tool receives the id beside the idempotency key).
func (n notifying) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	return n.Gate.Execute(plug.WithTicket(ctx, id), id)
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
