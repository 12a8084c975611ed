package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
)

// Upstream limits when [UpstreamOptions] says nothing.
const (
	DefaultCallTimeout    = 2 * time.Minute
	DefaultMaxOutputBytes = 1 << 20
	DefaultMaxTools       = 1000
	minBackoff            = 200 * time.Millisecond
	maxBackoff            = 30 * time.Second
)

// Errors of the upstream server. A tools/call that meets one is a tool
// error saying so; none of them quotes the server's own text.
var (
	// ErrUpstreamDown means the upstream server is not connected (it
	// exited and is being restarted).
	ErrUpstreamDown = errors.New("mcpgate: upstream server not connected")
	// ErrUpstreamTimeout means the upstream server did not answer a call
	// within its bound.
	ErrUpstreamTimeout = errors.New("mcpgate: upstream server did not answer in time")
	// ErrUpstreamFailed means the upstream server refused the call at the
	// protocol level (not a tool error, which is an ordinary result).
	ErrUpstreamFailed = errors.New("mcpgate: upstream server failed the call")
	// ErrUpstreamLost means the connection to the upstream server ended
	// while a call was in its hands (the server exited, the stream broke)
	// with no answer: the call may have run.
	ErrUpstreamLost = errors.New("mcpgate: upstream connection ended during the call")
	// ErrOutputTooLarge means the upstream's answer exceeded the bound.
	ErrOutputTooLarge = errors.New("mcpgate: upstream output too large")
	// ErrAmbiguousArgs means the arguments hold, in one object, two keys
	// that fold alike, which a server may read as one: they are not sent,
	// whatever policy approved them.
	ErrAmbiguousArgs = errors.New("mcpgate: arguments hold two keys a server may read as one")
)

// Dialer makes a fresh transport to the upstream server. It is called
// once to start and again for every restart.
type Dialer func() mcp.Transport

// Command is the Dialer of an upstream server started as a command that
// speaks MCP on its stdin and stdout; its stderr goes to stderr (nil:
// discarded).
func Command(stderr io.Writer, name string, args ...string) Dialer {
	return func() mcp.Transport {
		cmd := exec.Command(name, args...)
		cmd.Stderr = stderr
		return &mcp.CommandTransport{Command: cmd}
	}
}

// HTTP is the Dialer of an upstream server at a streamable HTTP endpoint
// (nil hc: http.DefaultClient). Each message the server sends is bounded
// by [MaxFrameBytes].
func HTTP(endpoint string, hc *http.Client) Dialer {
	hc = boundedClient(hc, MaxFrameBytes)
	return func() mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}
	}
}

// UpstreamOptions tunes [Connect]; nil means defaults.
type UpstreamOptions struct {
	// CallTimeout bounds one tools/call (default [DefaultCallTimeout]).
	CallTimeout time.Duration
	// MaxOutputBytes bounds one call's result as JSON (default
	// [DefaultMaxOutputBytes]); a larger one is refused.
	MaxOutputBytes int
	// MaxTools bounds the listing kept (default [DefaultMaxTools]).
	MaxTools int
	// Logger gets restarts and listing changes, never arguments.
	Logger *slog.Logger
}

// Upstream is a connection to the MCP server the gateway fronts: its
// tool listing, kept current through tools/list_changed, and calls to it,
// bounded in time and size. When the server exits it is restarted with
// backoff; calls meanwhile fail with [ErrUpstreamDown].
type Upstream struct {
	dial   Dialer
	o      UpstreamOptions
	log    *slog.Logger
	client *mcp.Client

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	cs        *mcp.ClientSession // nil while down
	tools     []*mcp.Tool
	onChange  []func([]*mcp.Tool)
	restarts  int
	closed    bool
	relisting bool
	again     bool

	once onceOutputs
}

// Connect starts or connects to the upstream server and lists its tools.
// A server that cannot be reached or listed is an error here, not a
// denial per call later.
func Connect(ctx context.Context, dial Dialer, opts *UpstreamOptions) (*Upstream, error) {
	o := UpstreamOptions{}
	if opts != nil {
		o = *opts
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	u := &Upstream{dial: dial, o: o, log: o.Logger}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	u.once.keys = map[string]*onceOutput{}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.client = mcp.NewClient(&mcp.Implementation{Name: "asu-mcpgate", Version: "v0.1.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			u.relist()
		},
	})
	cs, err := u.connect(ctx)
	if err != nil {
		u.cancel()
		return nil, err
	}
	// A server may announce tools/list_changed before the first listing
	// is read; the session is in place for that relisting to use.
	u.mu.Lock()
	u.cs = cs
	u.mu.Unlock()
	tools, err := u.list(ctx, cs)
	if err != nil {
		_ = u.Close()
		return nil, err
	}
	u.setTools(tools)
	u.wg.Go(func() { u.supervise(cs) })
	return u, nil
}

// connect starts a session, its handshake bounded by CallTimeout: a
// server that never answers is a failed start, not a hang.
func (u *Upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, u.o.CallTimeout)
	defer cancel()
	cs, err := u.client.Connect(ctx, u.dial(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("%w: connect: %v", ErrUpstreamDown, err)
	}
	return cs, nil
}

// list reads the whole tool listing, bounded by MaxTools.
func (u *Upstream) list(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, u.o.CallTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("%w: tools/list: %v", ErrUpstreamFailed, err)
		}
		if len(tools) == u.o.MaxTools {
			return nil, fmt.Errorf("%w: more than %d tools", ErrUpstreamFailed, u.o.MaxTools)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// supervise restarts the server each time its session ends, with
// exponential backoff that resets once a session has lasted a while,
// until Close.
func (u *Upstream) supervise(cs *mcp.ClientSession) {
	backoff := minBackoff
	for {
		up := time.Now()
		_ = cs.Wait()
		u.mu.Lock()
		u.cs = nil
		closed := u.closed
		u.mu.Unlock()
		if closed {
			return
		}
		if time.Since(up) > 10*maxBackoff {
			backoff = minBackoff
		}
		u.log.Warn("upstream server disconnected; restarting", "backoff", backoff)
		for {
			select {
			case <-u.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			next, err := u.connect(u.ctx)
			if err != nil {
				u.log.Warn("upstream restart failed", "backoff", backoff)
				continue
			}
			tools, err := u.list(u.ctx, next)
			if err != nil {
				_ = next.Close()
				continue
			}
			u.mu.Lock()
			if u.closed {
				u.mu.Unlock()
				_ = next.Close()
				return
			}
			u.cs, u.restarts = next, u.restarts+1
			u.mu.Unlock()
			u.setTools(tools)
			u.log.Info("upstream server restarted")
			cs = next
			break
		}
	}
}

// relist reads the listing again after tools/list_changed. It runs one
// at a time; a change announced meanwhile runs it once more.
func (u *Upstream) relist() {
	u.mu.Lock()
	if u.relisting || u.closed {
		u.again = true
		u.mu.Unlock()
		return
	}
	u.relisting = true
	u.mu.Unlock()
	u.wg.Go(func() {
		for {
			u.mu.Lock()
			cs := u.cs
			u.again = false
			u.mu.Unlock()
			if cs != nil {
				ctx, cancel := context.WithTimeout(u.ctx, u.o.CallTimeout)
				tools, err := u.list(ctx, cs)
				cancel()
				if err == nil {
					u.setTools(tools)
				} else {
					u.log.Warn("upstream tools/list failed after list_changed")
				}
			}
			u.mu.Lock()
			if !u.again || u.closed {
				u.relisting = false
				u.mu.Unlock()
				return
			}
			u.mu.Unlock()
		}
	})
}

func (u *Upstream) setTools(tools []*mcp.Tool) {
	u.mu.Lock()
	u.tools = tools
	subs := slices.Clone(u.onChange)
	u.mu.Unlock()
	for _, f := range subs {
		f(slices.Clone(tools))
	}
}

// Tools returns the upstream's current tool listing: untrusted text
// (names, descriptions, schemas, annotations) from the server.
func (u *Upstream) Tools() []*mcp.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.tools)
}

// OnToolsChanged registers f to be called with the new listing whenever
// it changes (after tools/list_changed, or a restart).
func (u *Upstream) OnToolsChanged(f func([]*mcp.Tool)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.onChange = append(u.onChange, f)
}

// Restarts returns how many times the server was restarted.
func (u *Upstream) Restarts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.restarts
}

// Call runs tool name with args on the upstream server, bounded by
// CallTimeout and MaxOutputBytes, and returns its result as JSON. A tool
// error is a result (isError set), not an error.
func (u *Upstream) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	out, _, err := u.call(ctx, name, args)
	return out, err
}

// call is Call, returning the decoded result too.
func (u *Upstream) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *mcp.CallToolResult, error) {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return nil, nil, ErrUpstreamDown
	}
	ctx, cancel := context.WithTimeout(ctx, u.o.CallTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	var refusal *jsonrpc.Error
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, nil, ErrUpstreamTimeout
	case errors.As(err, &refusal):
		// The server answered, with a protocol error: it refused the call.
		return nil, nil, ErrUpstreamFailed
	case err != nil:
		// Any other failure once the call was handed over (the connection
		// closed, the server exited, the stream broke) leaves it unknown
		// whether the server ran it.
		return nil, nil, ErrUpstreamLost
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, nil, ErrUpstreamFailed
	}
	if len(out) > u.o.MaxOutputBytes {
		return nil, nil, fmt.Errorf("%w: more than %d bytes", ErrOutputTooLarge, u.o.MaxOutputBytes)
	}
	return out, res, nil
}

// Executor returns the gate's executor of upstream tools: it calls the
// stored effect's tool with the stored arguments, never the host's, and
// at most once per idempotency key, so a recovered execution in this
// process returns the first run's answer instead of calling again.
//
// Arguments holding two keys that fold alike are never sent, whatever
// policy approved them ([ErrAmbiguousArgs]): the catalog's policy denies
// them at propose, and this is the same check for a policy of one's own.
func (u *Upstream) Executor() plug.Executor {
	return plug.ExecutorFunc(func(ctx context.Context, e canon.Effect, key string) ([]byte, error) {
		if v, err := canon.Parse(e.Args); err == nil && foldedTwins(v) {
			return nil, ErrAmbiguousArgs
		}
		return u.once.do(key, func() ([]byte, error) {
			out, res, err := u.call(ctx, e.Tool, e.Args)
			if err == nil {
				fill(ctx, out, res)
			}
			return out, err
		})
	})
}

// Close ends the session and stops restarts; a command server is told
// to exit.
func (u *Upstream) Close() error {
	u.mu.Lock()
	u.closed = true
	cs := u.cs
	u.mu.Unlock()
	u.cancel()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	u.wg.Wait()
	return err
}

// maxRemembered bounds the idempotency keys an Upstream remembers: a
// recovery re-runs a key soon after its first run, within one lease.
const maxRemembered = 4096

// onceOutputs remembers the outcome of the last maxRemembered
// idempotency keys, so a key runs once.
type onceOutputs struct {
	mu    sync.Mutex
	keys  map[string]*onceOutput
	order []string // oldest first
}

type onceOutput struct {
	once sync.Once
	out  []byte
	err  error
}

func (o *onceOutputs) do(key string, f func() ([]byte, error)) ([]byte, error) {
	o.mu.Lock()
	e, ok := o.keys[key]
	if !ok {
		e = &onceOutput{}
		o.keys[key] = e
		o.order = append(o.order, key)
		if len(o.order) > maxRemembered {
			delete(o.keys, o.order[0])
			o.order = o.order[1:]
		}
	}
	o.mu.Unlock()
	e.once.Do(func() { e.out, e.err = f() })
	return e.out, e.err
}
