package mcpgate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// MinTokenBytes is the shortest bearer token [Proxy.HTTPHandler] accepts.
const MinTokenBytes = 32

// HTTPHandler returns the proxy served over MCP's streamable HTTP
// transport, admitting only requests with "Authorization: Bearer token".
// Every session of every host is one gate session of its own; all act for
// the proxy's principal. Sessions idle for [Options.SessionIdleTimeout]
// are closed, and at most [Options.MaxSessions] are open at once: a host
// that starts one more is refused with 503 and a JSON-RPC error.
func (p *Proxy) HTTPHandler(token string) (http.Handler, error) {
	if len(token) < MinTokenBytes {
		return nil, fmt.Errorf("%w: bearer token shorter than %d bytes", stepup.ErrConfig, MinTokenBytes)
	}
	want := sha256.Sum256([]byte(token))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: p.o.SessionIdleTimeout, Logger: p.o.Logger})
	slots := &sessionSlots{max: p.o.MaxSessions}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="asu-mcp"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && !strictBody(w, r) {
			return
		}
		if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" {
			h.ServeHTTP(w, r)
			return
		}
		// A POST without a session may start one: it takes a slot first,
		// kept until the session it started closes.
		if !slots.take() {
			p.log.Warn("host session refused", "why", "too many sessions", "max", slots.max)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%q}}`,
				fmt.Sprintf("too many open MCP sessions (at most %d): end one (DELETE) or wait for an idle one to close", slots.max))
			return
		}
		h.ServeHTTP(w, r)
		ss := p.serverSession(w.Header().Get(sessionHeader))
		if ss == nil || p.sessions.onClose(ss, slots.put) != nil {
			slots.put()
		}
	}), nil
}

// strictBody reads r's body, bounded by [MaxFrameBytes], and refuses it
// as [StrictTransport] refuses a message: a member named twice is answered
// 400 with a JSON-RPC error. Otherwise the body is put back for the SDK.
func strictBody(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxFrameBytes+1))
	_ = r.Body.Close()
	switch {
	case err != nil:
		http.Error(w, "could not read the request", http.StatusBadRequest)
		return false
	case len(body) > MaxFrameBytes:
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return false
	case checkMembers(body) != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(refusal(body))
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// sessionHeader names a streamable HTTP session.
const sessionHeader = "Mcp-Session-Id"

// serverSession returns the open session of the proxy's server named id,
// or nil.
func (p *Proxy) serverSession(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range p.server.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// sessionSlots counts the host sessions of one handler, open or being
// opened, up to max.
type sessionSlots struct {
	mu   sync.Mutex
	max  int
	open int
}

func (s *sessionSlots) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= s.max {
		return false
	}
	s.open++
	return true
}

func (s *sessionSlots) put() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
}

// ProbeTool is the tool name [Probe] proposes: in the gate's reserved
// namespace, so it is always denied and never runs.
const ProbeTool = "asu.mcpgate.probe"

// Probe proposes one call of [ProbeTool] for principal, which the gate
// denies as unknown, to find out at start-up whether rt accepts the
// principal at all. A remote gateway whose runtime token is wrong, or
// acts for another principal, refuses it with an error here, where
// otherwise every later call would be denied with no reason the model
// could act on. The denial is one audit row.
func Probe(ctx context.Context, rt stepup.Runtime, principal canon.Principal) error {
	tk, err := rt.Propose(ctx, stepup.Call{Tool: ProbeTool, Args: json.RawMessage(`{}`), Task: "start-up check",
		Session: "mcpgate:probe", Principal: principal})
	if err != nil {
		return fmt.Errorf("the gate refused the gateway's principal %s/%s or its token: %w", principal.User, principal.Agent, err)
	}
	if tk.Status != stepup.StatusDenied {
		return fmt.Errorf("%w: the gate did not deny the start-up probe (status %s)", stepup.ErrConfig, tk.Status)
	}
	return nil
}
