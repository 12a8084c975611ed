package mcpgate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// routeCatalog sends e-mail to the mail desk, which has two minutes to
// decide before the call is cancelled; writing a file stays with the
// user the call runs for, on the gate's default timeout.
const routeCatalog = `{
  "version": "mcp-route-1",
  "tools": [
    {"name": "send_email", "class": "external", "approvers": "mail-desk",
     "timeout": {"after": "2m", "outcome": "cancel"}},
    {"name": "write_file", "class": "irreversible", "refs": {"path": "path"}}
  ]
}`

// mailDeskTimeout is routeCatalog's timeout of send_email.
const mailDeskTimeout = 2 * time.Minute

// erin is the mail desk's only member; the calls run for user:dana, who
// is not in it.
const erin = "user:erin"

// gateWorld puts a gate deciding with catalog (JSON) in front of up,
// resolving paths under dir, with gopts after the world's own, and
// serves it through a proxy as newWorld does. It leaves world.upstream
// nil: up may be any server.
func gateWorld(t *testing.T, up *mcpgate.Upstream, dir, catalog string, gopts ...gate.Option) *world {
	t.Helper()
	w := &world{t: t, dir: dir, up: up}
	var err error
	w.cat, err = mcpgate.ParseCatalog(strings.NewReader(catalog))
	require.NoError(t, err)
	pol, err := w.cat.Policy(up.Tools())
	require.NoError(t, err)
	opts := []gate.Option{gate.WithResolver(mcpgate.PathResolver{Root: w.dir, Base: w.dir})}
	for _, tool := range w.cat.Tools {
		opts = append(opts, gate.WithExecutor(tool.Name, up.Executor()))
	}
	w.h = stepuptest.NewGate(t, pol, append(opts, gopts...)...)
	w.proxy, err = mcpgate.NewProxy(w.h.Gate, principal, up, w.cat.Class, &mcpgate.Options{
		WaitTimeout: 10 * time.Second, ProgressInterval: 20 * time.Millisecond,
		ApprovalLink: func(id stepup.TicketID) string { return gateway.ApprovalLink(stepuptest.RP().Origin, id) }})
	require.NoError(t, err)
	return w
}

// routeWorld is routeCatalog's gate, given the mail desk, in front of
// the fake upstream, with erin enrolled.
func routeWorld(t *testing.T) (*world, *stepuptest.Authenticator) {
	t.Helper()
	dir := t.TempDir()
	f := newFakeUpstream(t, dir)
	up, err := mcpgate.Connect(context.Background(), f.dial, &mcpgate.UpstreamOptions{CallTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	w := gateWorld(t, up, dir, routeCatalog, gate.WithApproverGroup("mail-desk", erin))
	w.upstream = f
	return w, w.h.Enroll(t, erin)
}

// hostResult is what a tools/call made in the background came back with.
type hostResult struct {
	text  string
	isErr bool
	err   error
}

// callLater makes a tools/call from h in the background, so the test can
// act as the approver meanwhile.
func callLater(h *host, tool, args string) <-chan hostResult {
	out := make(chan hostResult, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), callParams(tool, args))
		if err != nil {
			out <- hostResult{err: err}
			return
		}
		out <- hostResult{text: resultText(res), isErr: res.IsError}
	}()
	return out
}

// answer waits for the host's call to come back.
func answer(t *testing.T, c <-chan hostResult) hostResult {
	t.Helper()
	select {
	case r := <-c:
		require.NoError(t, r.err)
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the host's call did not come back")
		return hostResult{}
	}
}

// TestCatalogRouteParsed: the catalog's approver group and timeout reach
// the gate's policy as the route of the tool, and only of that tool.
func TestCatalogRouteParsed(t *testing.T) {
	cat, err := mcpgate.ParseCatalog(strings.NewReader(routeCatalog))
	require.NoError(t, err)
	pol, err := cat.Policy(nil)
	require.NoError(t, err)
	var r plug.Router = pol
	route, ok := r.Route("send_email", "mcp-route-1")
	require.True(t, ok)
	assert.Equal(t, "mail-desk", route.Approvers)
	assert.Equal(t, plug.Timeout{After: mailDeskTimeout, Outcome: plug.OutcomeCancel}, route.Timeout)
	route, ok = r.Route("write_file", "mcp-route-1")
	require.True(t, ok)
	assert.Empty(t, route.Approvers)
	assert.Zero(t, route.Timeout)
}

// TestCatalogRouteApprovers: a tool the catalog routes to an approver
// group is decided by the group's members only, not by the user the call
// runs for; a tool it does not route is decided by that user, not by the
// group. Each refusal is the desk's (the outsider signs with a passkey of
// their own), and only the permitted approval makes the call run, once.
func TestCatalogRouteApprovers(t *testing.T) {
	cases := []struct {
		tool, args, out string
		approvers       []string
		member, outside string
	}{
		{tool: "send_email", args: `{"to":"ops@example.com","body":"hi"}`, out: "sent",
			approvers: []string{erin}, member: erin, outside: stepuptest.Approver},
		{tool: "write_file", args: `{"path":"n.txt","content":"note"}`, out: "wrote n.txt",
			approvers: []string{stepuptest.Approver}, member: stepuptest.Approver, outside: erin},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			ctx := context.Background()
			w, erinKey := routeWorld(t)
			keys := map[string]*stepuptest.Authenticator{stepuptest.Approver: w.h.Authenticator, erin: erinKey}
			h := w.connect(hostOptions{urlElicitation: true})
			res := callLater(h, c.tool, c.args)
			id := ticketOf(t, h.nextLink(t))
			desk := w.h.Gate.Desk()

			p, err := desk.Prompt(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, c.approvers, p.Approvers)

			out := keys[c.outside]
			_, err = stepuptest.Approve(ctx, desk, out, id, stepuptest.WithCredential(out.CredentialIDs()[0]))
			require.ErrorIs(t, err, stepup.ErrNotPermitted, "%s is outside the route", c.outside)
			tk, err := w.h.Gate.Ticket(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, tk.Status, "a refused approver decides nothing")
			assert.Zero(t, w.upstream.count(c.tool))

			got, err := stepuptest.Approve(ctx, desk, keys[c.member], id)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusApproved, got.Status)
			r := answer(t, res)
			assert.False(t, r.isErr, r.text)
			assert.Equal(t, c.out, r.text)
			assert.Equal(t, 1, w.upstream.count(c.tool))
		})
	}
}

// TestCatalogRouteTimeout: a call of a tool with a catalog timeout is
// cancelled once that timeout passes on the gate's clock, well before
// the gate's default; the host's call comes back cancelled, the group
// can no longer approve it, and the upstream never runs it. A ticket of
// a tool without a catalog timeout, parked at the same moment, is still
// pending.
func TestCatalogRouteTimeout(t *testing.T) {
	ctx := context.Background()
	w, erinKey := routeWorld(t)
	h := w.connect(hostOptions{urlElicitation: true})
	res := callLater(h, "send_email", `{"to":"ops@example.com","body":"hi"}`)
	id := ticketOf(t, h.nextLink(t))
	parked := w.h.Clock.Now()

	tk, err := w.h.Gate.Ticket(ctx, id)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	assert.Equal(t, parked.Add(mailDeskTimeout), tk.ExpiresAt)

	other, err := w.h.Gate.Propose(ctx, stepup.Call{Tool: "write_file", Args: json.RawMessage(`{"path":"o.txt","content":"o"}`),
		Task: "mcp", Session: "other", Principal: principal})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, other.Status)
	assert.Equal(t, parked.Add(gate.DefaultTTL), other.ExpiresAt)
	require.Greater(t, gate.DefaultTTL, mailDeskTimeout, "the catalog's timeout must be the shorter one")

	w.h.Clock.Advance(mailDeskTimeout - time.Second)
	n, err := w.h.Gate.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing times out before the catalog's timeout")
	tk, err = w.h.Gate.Ticket(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status)

	w.h.Clock.Advance(time.Second)
	// The host's own wait may meet the expired ticket first; either way
	// it is timed out once.
	_, err = w.h.Gate.Sweep(ctx)
	require.NoError(t, err)
	r := answer(t, res)
	assert.True(t, r.isErr)
	assert.Equal(t, "cancelled: no decision in time; cancelled", r.text)

	tk, err = w.h.Gate.Ticket(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusCancelled, tk.Status)
	assert.Equal(t, "no decision in time; cancelled", tk.Reason)
	_, err = stepuptest.Approve(ctx, w.h.Gate.Desk(), erinKey, id)
	assert.ErrorIs(t, err, stepup.ErrExpired, "too late for the group to approve")
	assert.Zero(t, w.upstream.count("send_email"))

	tk, err = w.h.Gate.Ticket(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusPending, tk.Status, "a tool without a catalog timeout keeps the default")
}
