package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// gatewayProc is one gateway started by run in this process.
type gatewayProc struct {
	started
	out    *syncWriter
	buf    *bytes.Buffer
	cancel context.CancelFunc
	done   chan error
}

// startGateway runs the gateway with o on free ports until the test ends
// or stop is called.
func startGateway(t *testing.T, o options) *gatewayProc {
	t.Helper()
	if o.agentAddr == "" {
		o.agentAddr = "127.0.0.1:0"
	}
	if o.siteAddr == "" {
		o.siteAddr = "127.0.0.1:0"
	}
	if o.agent == "" {
		o.agent = "agent:reports"
	}
	if o.user == "" {
		o.user = "user:dana"
	}
	if o.log == nil {
		o.log = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &gatewayProc{buf: &bytes.Buffer{}, cancel: cancel, done: make(chan error, 1)}
	p.out = &syncWriter{w: p.buf}
	ready := make(chan started, 1)
	go func() { p.done <- run(ctx, p.out, o, func(s started) { ready <- s }) }()
	select {
	case p.started = <-ready:
	case err := <-p.done:
		cancel()
		t.Fatalf("gateway did not start: %v", err)
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop shuts the gateway down and waits for it; stopping twice is fine.
func (p *gatewayProc) stop(t *testing.T) {
	t.Helper()
	p.cancel()
	if p.done == nil {
		return
	}
	require.NoError(t, <-p.done)
	p.done = nil
}

// printed returns what the gateway printed so far.
func (p *gatewayProc) printed() string {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	return p.buf.String()
}

// enroll redeems the printed invite link with a fresh fake passkey.
func (p *gatewayProc) enroll(t *testing.T) *stepuptest.Authenticator {
	t.Helper()
	return enrollLink(t, p.Origin, p.InviteLink)
}

func enrollLink(t *testing.T, origin, link string) *stepuptest.Authenticator {
	t.Helper()
	inv, err := url.Parse(link)
	require.NoError(t, err)
	a := stepuptest.NewAuthenticator("localhost", origin)
	reg, err := a.Register(find(t, get(t, origin+"/enroll?"+inv.RawQuery), "options"))
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"invite": inv.Query().Get("invite"), "credential": json.RawMessage(reg)})
	require.NoError(t, err)
	post(t, origin+"/enroll", origin, body)
	return a
}

// approve approves ticket id on the site at origin with passkey a.
func approve(t *testing.T, origin string, a *stepuptest.Authenticator, id stepup.TicketID) {
	t.Helper()
	assertion, err := a.Assert(find(t, get(t, origin+"/approve/"+string(id)), "approve"))
	require.NoError(t, err)
	post(t, origin+"/approve/"+string(id), origin, assertion)
}
