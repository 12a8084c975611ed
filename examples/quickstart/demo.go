package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store/sqlite"
)

// demoKey is the demo gate's MAC key (see gate.WithKey).
var demoKey = []byte("asu quickstart demo key, 32 bytes+")

// q3 is the attachment of the reference approval program.
const q3 = "region,revenue\nwest,410\neast,385\n"

// demo is the whole setting: files, a database, a gate, an approver.
type demo struct {
	out   io.Writer
	dir   string // resolver root holding q3.csv
	db    string // SQLite file
	st    *sqlite.Store
	clock *stepuptest.Clock
	gate  *gate.Gate
	enrol *passkey.Enrollment
	dana  *stepuptest.Authenticator // the approver's passkey
	mail  *outbox
	sent  stepup.TicketID // the approved send_email call of case 1
}

// options are the command's flags.
type options struct {
	receipt string // file to write the receipt of the approved send_email call to
}

// run builds the demo in a temporary directory and prints every section.
func run(ctx context.Context, out io.Writer, o options) error {
	tmp, err := os.MkdirTemp("", "asu-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	d, err := newDemo(ctx, out, tmp)
	if err != nil {
		return err
	}
	defer func() { _ = d.st.Close() }()
	for _, section := range []func(context.Context) error{
		d.policyDecisions, d.canonicalEffect, d.approvalCard, d.sevenCases,
		d.agentIndependence, d.effectBinding, d.freshness, d.scopeIntegrity, d.floodResistance,
		d.approversAsPeople,
	} {
		if err := section(ctx); err != nil {
			return err
		}
	}
	if o.receipt != "" {
		return d.writeReceipt(ctx, o.receipt)
	}
	return nil
}

func newDemo(ctx context.Context, out io.Writer, tmp string) (*demo, error) {
	d := &demo{out: out, dir: filepath.Join(tmp, "files"), db: filepath.Join(tmp, "asu.db"),
		clock: stepuptest.NewClock(time.Date(2026, 10, 30, 9, 0, 0, 0, time.UTC)), mail: newOutbox()}
	if err := os.Mkdir(d.dir, 0o700); err != nil {
		return nil, err
	}
	if err := d.writeQ3(q3); err != nil {
		return nil, err
	}
	if err := d.open(d.mail); err != nil {
		return nil, err
	}
	dana, err := stepuptest.Enroll(ctx, d.enrol, "user:dana")
	if err != nil {
		return nil, fmt.Errorf("enroll approver: %w", err)
	}
	d.dana = dana
	fmt.Fprintf(out, "asu quickstart: the reference approval program on the gate (store/sqlite, passkey approvals)\n")
	return d, nil
}

// open (re)opens the database and builds a gate on it whose tools run
// through exec.
func (d *demo) open(exec plug.Executor) error {
	st, err := sqlite.Open(context.Background(), d.db, &sqlite.Options{Clock: d.clock.Now})
	if err != nil {
		return err
	}
	// The attack table asks and denies far more often than any real
	// session would, so this gate's flood limits are off; the P7 section
	// runs a gate with flood's default limits on the same database.
	lim, err := flood.New(st, flood.Limits{Session: flood.Rate{N: -1}, User: flood.Rate{N: -1},
		Agent: flood.Rate{N: -1}, ApproverInflow: flood.Rate{N: -1}, AgentLockout: flood.Lockout{After: -1},
		SessionLockout: flood.Lockout{After: -1}, UserLockout: flood.Lockout{After: -1},
		PendingPerSession: -1, PendingPerUser: -1}, d.clock.Now)
	if err != nil {
		_ = st.Close()
		return err
	}
	// A real gate reads its key from a secret store; it is the same after a
	// restart and on every replica sharing the database.
	// The demo's time is simulated: the gate measures its own waits on the
	// same clock as the database (a real gate leaves its local clock be).
	// Dana answers the moment she is shown a card; a deployed gate keeps
	// its dwell time (gate.DefaultDwell) before external calls' approvals.
	opts := []gate.Option{gate.WithKey(demoKey), gate.WithResolver(canon.FileResolver{Root: d.dir}),
		gate.WithFlood(lim), gate.WithLocalClock(d.clock.Now), gate.WithDwell(0)}
	for _, tool := range []string{"read_file", "search_tickets", "write_draft", "send_email", "issue_refund"} {
		opts = append(opts, gate.WithExecutor(tool, exec))
	}
	approver, err := passkey.New(st, stepuptest.RP(), passkey.RequireSeal(demoKey))
	if err != nil {
		_ = st.Close()
		return err
	}
	g, err := gate.New(st, stepuptest.SeedCatalog(), approver, opts...)
	if err != nil {
		_ = st.Close()
		return err
	}
	enrol, err := passkey.NewEnrollment(st, stepuptest.RP(), passkey.WithClock(d.clock.Now),
		passkey.WithSealKey(demoKey))
	if err != nil {
		_ = st.Close()
		return err
	}
	d.st, d.gate, d.enrol = st, g, enrol
	return nil
}

func (d *demo) writeQ3(content string) error {
	return os.WriteFile(filepath.Join(d.dir, "q3.csv"), []byte(content), 0o600)
}

// act is the reference program's send_email call by agent:reports for user:dana.
func act(to string) stepup.Call {
	return stepup.Call{
		Tool:      "send_email",
		Args:      json.RawMessage(`{"to":"` + to + `","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task:      "t-42",
		Step:      "step-7",
		Session:   "session-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
	}
}

// reordered is act with its keys in another order and other spacing.
func reordered() stepup.Call {
	c := act("finance@example.com")
	c.Args = json.RawMessage(`{ "attachment": "q3.csv", "subject": "Q3 summary", "to": "finance@example.com" }`)
	return c
}

// approved proposes c and approves it with Dana's passkey.
func (d *demo) approved(ctx context.Context, c stepup.Call) (stepup.Ticket, error) {
	tk, err := d.gate.Propose(ctx, c)
	if err != nil {
		return tk, err
	}
	if tk.Status != stepup.StatusPending {
		return tk, fmt.Errorf("%s: want pending, got %s", c.Tool, tk.Status)
	}
	return stepuptest.Approve(ctx, d.gate.Desk(), d.dana, tk.ID)
}

// outcome words a gate answer the way the reference approval program does.
func outcome(err error) string {
	var bad *passkey.AssertionError
	switch {
	case err == nil:
		return "execute"
	case errors.Is(err, stepup.ErrConsumed):
		return "reject: approval already used"
	case errors.Is(err, stepup.ErrExpired):
		return "reject: approval expired"
	case errors.Is(err, stepup.ErrEffectChanged):
		return "reject: action differs from what was approved"
	case errors.Is(err, stepup.ErrNotApproved):
		return "reject: not approved"
	case errors.As(err, &bad):
		return "reject: " + map[string]string{
			"signature": "bad signature", "challenge": "wrong challenge", "origin": "wrong origin",
			"rp id": "wrong RP ID", "user verification": "user not verified",
		}[bad.Check]
	case errors.Is(err, stepup.ErrNotPermitted):
		return "refused: approver must be a human other than the requester"
	case errors.Is(err, passkey.ErrCounter):
		return "reject: signature counter did not advance"
	case errors.Is(err, stepup.ErrResolved):
		return "reject: already decided"
	case errors.Is(err, passkey.ErrUnknownCredential):
		return "reject: credential not enrolled"
	default:
		return "error: " + err.Error()
	}
}

// line prints one attack and its outcome in the table's two columns.
func (d *demo) line(label, result string) {
	fmt.Fprintf(d.out, "  %-44s %s\n", label, result)
}

// outbox is the send_email backend: it sends once per idempotency key.
type outbox struct {
	mu       sync.Mutex
	sent     map[string]canon.Effect
	lastSent canon.Effect
	runs     int
}

func newOutbox() *outbox { return &outbox{sent: map[string]canon.Effect{}} }

// Execute implements stepup.Executor.
func (o *outbox) Execute(_ context.Context, e canon.Effect, key string) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, dup := o.sent[key]; !dup {
		o.sent[key] = e
		o.lastSent = e
		o.runs++
	}
	return []byte(`{"queued":true}`), nil
}

// count returns how many effects actually ran.
func (o *outbox) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs
}

// recipient returns the "to" argument of e.
func recipient(e canon.Effect) string {
	var args struct {
		To string `json:"to"`
	}
	_ = json.Unmarshal(e.Args, &args)
	return args.To
}

// last returns the most recently sent effect.
func (o *outbox) last() canon.Effect {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastSent
}
