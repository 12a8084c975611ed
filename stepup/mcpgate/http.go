package mcpgate

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// MinTokenBytes is the shortest bearer token [Proxy.HTTPHandler] accepts.
const MinTokenBytes = 32

// HTTPHandler returns the proxy served over MCP's streamable HTTP
// transport, admitting only requests with "Authorization: Bearer token".
// Every session of every host is one gate session of its own; all act for
// the proxy's principal.
func (p *Proxy) HTTPHandler(token string) (http.Handler, error) {
	if len(token) < MinTokenBytes {
		return nil, fmt.Errorf("%w: bearer token shorter than %d bytes", stepup.ErrConfig, MinTokenBytes)
	}
	want := sha256.Sum256([]byte(token))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.server }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="asu-mcp"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
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
