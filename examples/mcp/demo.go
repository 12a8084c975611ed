package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// demo runs the gated server against an in-memory MCP client, in one
// process: the client plays the agent, and the code marked "approver"
// stands in for the person, approving and denying on the gate's desk with
// a software passkey (stepuptest's fake authenticator).
func demo(ctx context.Context, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "asu-mcp-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	up, cat, paths, seed, err := upstreamOf(ctx, options{}, tmp, io.Discard)
	if err != nil {
		return err
	}
	defer up.Close()
	pol, err := cat.Policy(up.Tools())
	if err != nil {
		return err
	}
	// The demo plays the approver, who answers the moment a card is shown;
	// the gate run for a person keeps its dwell time.
	lg, err := openGate("", stepuptest.RP(), pol, paths, up, cat, gate.WithDwell(0))
	if err != nil {
		return err
	}
	defer lg.Close()
	passkey, err := stepuptest.Enroll(ctx, lg.enroll, "user:dana")
	if err != nil {
		return fmt.Errorf("enroll approver: %w", err)
	}
	pending := make(chan stepup.Ticket, 8)
	proxy, err := mcpgate.NewProxy(lg.gate, canon.Principal{User: "user:dana", Agent: defaultAgent}, up, cat.Class,
		&mcpgate.Options{Task: "t-42", WaitTimeout: time.Minute,
			OnPending: func(tk stepup.Ticket) { pending <- tk }})
	if err != nil {
		return err
	}
	cs, hangUp, err := connect(ctx, proxy.Server())
	if err != nil {
		return err
	}
	defer hangUp()
	d := &demoRun{out: out, cs: cs, desk: lg.gate.Desk(), passkey: passkey, pending: pending}

	fmt.Fprintln(out, "asu MCP demo: an MCP gateway whose tool calls go through the asu gate (store/memory)")
	review(out, up, cat)

	fmt.Fprintln(out, "\n1. read_file (read: allowed at once)")
	d.model(d.call(ctx, "read_file", map[string]any{"path": "q3.csv"}))

	fmt.Fprintln(out, "\n2. send_email (external: waits for a person; the model is not told the approval link)")
	email := map[string]any{"to": "finance@example.com", "subject": "Q3 summary", "attachment": "q3.csv"}
	res := d.callAsync(ctx, "send_email", email)
	approved, err := d.person(ctx, true)
	if err != nil {
		return err
	}
	d.model(<-res)

	fmt.Fprintln(out, "\n3. run_shell (offered by the upstream server, claiming read-only; not in the catalog)")
	d.model(d.call(ctx, "run_shell", map[string]any{"command": "cat ~/.ssh/id_ed25519"}))

	fmt.Fprintln(out, "\n4. substitution: the model calls send_email again, recipient changed")
	email["to"] = "finance@exarnple.com"
	res = d.callAsync(ctx, "send_email", email)
	again, err := d.person(ctx, false)
	if err != nil {
		return err
	}
	d.model(<-res)
	fmt.Fprintf(out, "   new ticket %s (digest %s), not the approved %s (digest %s)\n",
		short(again.ID), again.Digest.Short(), short(approved.ID), approved.Digest.Short())

	fmt.Fprintln(out, "\ncalls the upstream server received (the stored effect's arguments, never the model's):")
	for _, r := range seed.recorded() {
		fmt.Fprintf(out, "  %s %s\n", r.Tool, r.Args)
	}
	return nil
}

// demoRun is the demo's two sides: the MCP client and the approver.
type demoRun struct {
	out     io.Writer
	cs      *mcp.ClientSession
	desk    *gate.Desk
	passkey *stepuptest.Authenticator
	pending <-chan stepup.Ticket
}

// callResult is what the client got back from tools/call.
type callResult struct {
	res *mcp.CallToolResult
	err error
}

func (d *demoRun) call(ctx context.Context, tool string, args map[string]any) callResult {
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return callResult{res, err}
}

func (d *demoRun) callAsync(ctx context.Context, tool string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() { ch <- d.call(ctx, tool, args) }()
	return ch
}

// model prints what the model reads back.
func (d *demoRun) model(r callResult) {
	if r.err != nil {
		fmt.Fprintf(d.out, "   model reads: protocol error: %v\n", r.err)
		return
	}
	kind := "result"
	if r.res.IsError {
		kind = "tool error"
	}
	fmt.Fprintf(d.out, "   model reads (%s): %s\n", kind, resultText(r.res))
}

// person is the demo standing in for the approver: it takes the next
// ticket waiting for a person, reads its card, and approves it with the
// passkey or denies it.
func (d *demoRun) person(ctx context.Context, approve bool) (stepup.Ticket, error) {
	var tk stepup.Ticket
	select {
	case tk = <-d.pending:
	case <-ctx.Done():
		return tk, ctx.Err()
	}
	p, err := d.desk.Prompt(ctx, tk.ID)
	if err != nil {
		return tk, err
	}
	fmt.Fprintf(d.out, "   [approver, played by the demo] card of ticket %s:\n", short(tk.ID))
	for _, l := range strings.Split(strings.TrimRight(p.Card.Visible(), "\n"), "\n") {
		fmt.Fprintln(d.out, "     "+l)
	}
	if approve {
		if _, err := stepuptest.Approve(ctx, d.desk, d.passkey, tk.ID); err != nil {
			return tk, fmt.Errorf("approve: %w", err)
		}
		fmt.Fprintln(d.out, "   [approver] approves with her passkey")
		return tk, nil
	}
	if _, err := stepuptest.Deny(ctx, d.desk, d.passkey, tk.ID, "that is not our domain"); err != nil && !errors.Is(err, stepup.ErrStore) {
		return tk, fmt.Errorf("deny: %w", err)
	}
	fmt.Fprintln(d.out, "   [approver] denies: the recipient is not the one she approved")
	return tk, nil
}

// connect serves srv on one end of an in-memory pipe and connects an MCP
// client to the other. hangUp closes the client and waits for the server
// side to end.
func connect(ctx context.Context, srv *mcp.Server) (cs *mcp.ClientSession, hangUp func(), err error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0.1.0"}, nil)
	cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		_ = ss.Close()
		return nil, nil, err
	}
	return cs, func() { _ = cs.Close(); _ = ss.Wait() }, nil
}

// resultText joins a result's text content.
func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func short(id stepup.TicketID) string {
	if len(id) > 12 {
		return string(id[:12]) + "…"
	}
	return string(id)
}
