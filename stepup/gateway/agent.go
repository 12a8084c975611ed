package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
	"github.com/agentstepup/asu/stepup/remote"
)

// MaxCallBytes bounds a propose body, from the one size table: the
// arguments (canon.MaxArgs), an agent's rationale (canon.MaxText) and
// room for the rest of the call (canon.MaxEnvelope). A call within every
// limit whose text is not spelled with escapes fits; a larger body is
// refused with 413 too_large, the error the gate gives a call over a limit.
const MaxCallBytes = canon.MaxArgs + canon.MaxText + canon.MaxEnvelope

// DefaultMaxWait bounds one long poll when [AgentOptions] says nothing.
const DefaultMaxWait = remote.DefaultMaxWait

// DefaultMaxWaiters bounds the long polls one runtime token has open at
// once when [AgentOptions] says nothing.
const DefaultMaxWaiters = 32

// Gate is what the agent API serves: the runtime's calls (cancel
// included), a ticket as it stands without waiting, and who a ticket was
// proposed for, so the API answers only the agent that proposed it.
// [*gate.Gate] implements it.
type Gate interface {
	stepup.Runtime
	stepup.Canceller
	Ticket(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error)
	Requester(ctx context.Context, id stepup.TicketID) (canon.Principal, error)
}

// AgentOptions tunes [NewAgentAPI]; nil means defaults.
type AgentOptions struct {
	// MaxWait bounds one long poll (default [DefaultMaxWait]); a longer
	// requested timeout is cut to it. The server's WriteTimeout must exceed
	// it: see [NewServer].
	MaxWait time.Duration
	// MaxWaiters bounds the long polls one runtime token may have open at
	// once (default [DefaultMaxWaiters]); one more is refused with
	// [ErrBusy]. Each open poll reads the store, so without a bound one
	// runtime could load a database the gateway replicas share.
	MaxWaiters int
	// Logger receives one line per request: agent, tool, ticket, digest,
	// status or error code. Never arguments. Nil discards.
	Logger *slog.Logger
}

// AgentAPI is the HTTP face of [stepup.Runtime], for runtimes in any
// language; [remote.Client] speaks it from Go. It serves only
//
//	POST /v1/propose                 body: a call, JSON
//	GET  /v1/tickets/{id}/wait       ?timeout=30s, a bounded long poll
//	POST /v1/tickets/{id}/execute    no body: execute takes no arguments
//	POST /v1/tickets/{id}/cancel     body: {"reason": "..."}, optional
//	GET  /openapi.json               the API's OpenAPI 3.1 document ([OpenAPI]), no token
//
// An execute runs to its end even when its request ends first; the
// runtime then learns the outcome with a wait. Each is authenticated by a runtime's bearer token. It has no route to
// approve anything: serve it on its own listener, never on the approval
// site's origin.
type AgentAPI struct {
	rt      Gate
	tokens  *tokenSet
	maxWait time.Duration
	log     *slog.Logger
	mux     *http.ServeMux

	drain     context.Context // done once Drain is called
	drainDone context.CancelFunc
}

// NewAgentAPI returns the agent API over rt (a *gate.Gate), accepting the
// runtime tokens given.
func NewAgentAPI(rt Gate, tokens []RuntimeToken, opts *AgentOptions) (*AgentAPI, error) {
	if rt == nil {
		return nil, fmt.Errorf("%w: agent API needs a gate", stepup.ErrConfig)
	}
	set, err := newTokenSet(tokens)
	if err != nil {
		return nil, err
	}
	o := AgentOptions{}
	if opts != nil {
		o = *opts
	}
	if o.MaxWait < 0 || o.MaxWaiters < 0 {
		return nil, fmt.Errorf("%w: negative MaxWait or MaxWaiters", stepup.ErrConfig)
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.MaxWaiters == 0 {
		o.MaxWaiters = DefaultMaxWaiters
	}
	for i := range set.runtimes {
		set.runtimes[i].waiters = make(chan struct{}, o.MaxWaiters)
	}
	a := &AgentAPI{rt: rt, tokens: set, maxWait: o.MaxWait,
		log: logger(o.Logger), mux: http.NewServeMux()}
	a.drain, a.drainDone = context.WithCancel(context.Background())
	a.mux.HandleFunc("POST /v1/propose", a.auth(a.propose))
	a.mux.HandleFunc("GET /v1/tickets/{id}/wait", a.auth(a.wait))
	a.mux.HandleFunc("POST /v1/tickets/{id}/execute", a.auth(a.execute))
	a.mux.HandleFunc("POST /v1/tickets/{id}/cancel", a.auth(a.cancel))
	a.mux.HandleFunc("GET "+OpenAPIPath, serveOpenAPI)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, fmt.Errorf("%w: no such route", stepup.ErrNotFound))
	})
	return a, nil
}

// MaxWait is the longest one long poll lasts.
func (a *AgentAPI) MaxWait() time.Duration { return a.maxWait }

// ServeHTTP implements http.Handler.
func (a *AgentAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	a.mux.ServeHTTP(w, r)
}

// Drain ends every long poll at once, answering with the ticket as it
// stands, and makes later ones return at once: a shutting-down server
// then has nothing left to wait for. [Serve] calls it on shutdown.
func (a *AgentAPI) Drain() { a.drainDone() }

type agentHandler func(w http.ResponseWriter, r *http.Request, who runtime)

// auth admits a request only with a known runtime token.
func (a *AgentAPI) auth(next agentHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who, ok := a.tokens.runtime(bearer(r.Header.Get("Authorization")))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="asu"`)
			a.log.Warn("refused", "route", r.Pattern, "code", remote.CodeUnauthorized)
			writeError(w, fmt.Errorf("%w: a runtime token is required", remote.ErrUnauthorized))
			return
		}
		next(w, r, who)
	}
}

func (a *AgentAPI) propose(w http.ResponseWriter, r *http.Request, who runtime) {
	agent := who.agent
	body, err := wire.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallBytes), r.ContentLength, MaxCallBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = fmt.Errorf("%w: a call is at most %d bytes", remote.ErrTooLarge, MaxCallBytes)
		} else {
			err = fmt.Errorf("%w: body could not be read", remote.ErrInvalid)
		}
		a.refuse(w, "propose", agent, err)
		return
	}
	in, err := decodeCall(body)
	if err != nil {
		a.refuse(w, "propose", agent, err)
		return
	}
	c := in.Call()
	if c.Principal.Agent != agent {
		a.refuse(w, "propose", agent, fmt.Errorf("%w: this token proposes only as %s", remote.ErrForbidden, agent))
		return
	}
	if !who.users[c.Principal.User] {
		a.refuse(w, "propose", agent, fmt.Errorf("%w: this token does not act for that user", remote.ErrForbidden))
		return
	}
	if !delegationsActFor(c.Principal.Delegations, who) {
		// A person the call names as a delegation may not decide it: a
		// token naming people it does not act for would choose who may.
		a.refuse(w, "propose", agent, fmt.Errorf("%w: this token does not act for a person the delegations name", remote.ErrForbidden))
		return
	}
	t, err := a.rt.Propose(r.Context(), c)
	if err != nil {
		a.refuse(w, "propose", agent, err)
		return
	}
	a.log.Info("propose", "agent", agent, "tool", c.Tool, "ticket", t.ID, "digest", digestOf(t),
		"status", t.Status)
	writeJSON(w, http.StatusOK, wire.FromTicket(t))
}

func (a *AgentAPI) wait(w http.ResponseWriter, r *http.Request, who runtime) {
	agent := who.agent
	id := stepup.TicketID(r.PathValue("id"))
	d := a.maxWait
	if s := r.URL.Query().Get("timeout"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			a.refuse(w, "wait", agent, fmt.Errorf("%w: timeout must be a positive duration such as 30s", remote.ErrInvalid))
			return
		}
		d = min(v, a.maxWait)
	}
	if err := a.owned(r.Context(), id, who); err != nil {
		a.refuse(w, "wait", agent, err)
		return
	}
	select {
	case who.waiters <- struct{}{}:
		defer func() { <-who.waiters }()
	default:
		a.refuse(w, "wait", agent, fmt.Errorf("%w: at most %d at once", remote.ErrBusy, cap(who.waiters)))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	defer cancel()
	stop := context.AfterFunc(a.drain, cancel)
	defer stop()
	t, err := a.rt.Wait(ctx, id)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		t, err = a.standing(r.Context(), id) // the poll's own bound, or a drain
	}
	if err != nil {
		a.refuse(w, "wait", agent, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.FromTicket(t))
}

func (a *AgentAPI) execute(w http.ResponseWriter, r *http.Request, who runtime) {
	agent := who.agent
	id := stepup.TicketID(r.PathValue("id"))
	if r.ContentLength != 0 {
		a.refuse(w, "execute", agent, fmt.Errorf("%w: execute takes no arguments; it runs the stored call", remote.ErrInvalid))
		return
	}
	if err := a.owned(r.Context(), id, who); err != nil {
		a.refuse(w, "execute", agent, err)
		return
	}
	// Once asked, the approved call runs to its end: the request's end (the
	// runtime's timeout, a dropped connection) must not cut a tool off
	// half-way and spend the approval on a half-done action. The gate's
	// own bounds (the execution lease) still hold; a runtime that went
	// away learns the outcome with Wait.
	res, err := a.rt.Execute(context.WithoutCancel(r.Context()), id)
	if err != nil {
		a.refuse(w, "execute", agent, err)
		return
	}
	a.log.Info("execute", "agent", agent, "ticket", id)
	writeJSON(w, http.StatusOK, wire.Result{Ticket: string(res.Ticket), Output: res.Output,
		IdempotencyKey: res.IdempotencyKey})
}

// maxCancelBytes bounds a cancel's body: a short reason.
const maxCancelBytes = 2 << 10

// cancel withdraws one of the agent's pending tickets.
func (a *AgentAPI) cancel(w http.ResponseWriter, r *http.Request, who runtime) {
	agent := who.agent
	id := stepup.TicketID(r.PathValue("id"))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCancelBytes))
	if err != nil {
		a.refuse(w, "cancel", agent, fmt.Errorf("%w: a cancel is at most %d bytes", remote.ErrTooLarge, maxCancelBytes))
		return
	}
	var in wire.Cancel
	if len(body) > 0 {
		if _, err := decodeStrict(body, &in, []string{"reason"}); err != nil {
			a.refuse(w, "cancel", agent, err)
			return
		}
	}
	if err := a.owned(r.Context(), id, who); err != nil {
		a.refuse(w, "cancel", agent, err)
		return
	}
	t, err := a.rt.Cancel(r.Context(), id, in.Reason)
	if err != nil {
		a.refuse(w, "cancel", agent, err)
		return
	}
	a.log.Info("cancel", "agent", agent, "ticket", id, "status", t.Status)
	writeJSON(w, http.StatusOK, wire.FromTicket(t))
}

// delegationsActFor reports whether every person (a "user:" id) among
// delegations is one of the users the token acts for. The gate never lets
// a delegation decide the call it is part of, so a runtime that could
// name anyone there could strike approvers from its own call.
func delegationsActFor(delegations []string, who runtime) bool {
	for _, d := range delegations {
		if strings.HasPrefix(d, canon.PrefixUser) && !who.users[d] {
			return false
		}
	}
	return true
}

// standing returns ticket id as it stands, without waiting.
func (a *AgentAPI) standing(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	return a.rt.Ticket(ctx, id)
}

// owned fails with not found unless ticket id was proposed by the
// token's agent for one of the token's users: a ticket of another agent,
// or of a user the token does not act for, is not this runtime's to wait
// on, cancel or execute, and saying it exists would say too much.
func (a *AgentAPI) owned(ctx context.Context, id stepup.TicketID, who runtime) error {
	p, err := a.rt.Requester(ctx, id)
	switch {
	case errors.Is(err, stepup.ErrNotFound), err == nil && (p.Agent != who.agent || !who.users[p.User]):
		return fmt.Errorf("ticket: %w: no ticket of this agent has that id (a denied call's id is not one: "+
			"the denial at propose is final and is not stored)", stepup.ErrNotFound)
	case err != nil:
		return fmt.Errorf("ticket: %w", err)
	}
	return nil
}

// refuse logs a refusal and answers it.
func (a *AgentAPI) refuse(w http.ResponseWriter, op, agent string, err error) {
	r := classifyAgent(err)
	code, status := r.Code, r.Status
	switch {
	case errors.Is(err, stepup.ErrExecutorFailed):
		// An executor's error is the integrator's text and may quote the
		// call: neither logged nor answered.
		a.log.Error("failed", "op", op, "agent", agent, "code", code, "status", status)
	case status >= 500 || errors.Is(err, stepup.ErrStore) || errors.Is(err, stepup.ErrConfig):
		// The detail (a store driver's host, user or file) stays here,
		// not in the answer. The gate's own errors never quote arguments.
		a.log.Error("failed", "op", op, "agent", agent, "code", code, "status", status, "error", err.Error())
	default:
		a.log.Info("refused", "op", op, "agent", agent, "code", code, "status", status)
	}
	writeError(w, err)
}

func digestOf(t stepup.Ticket) string {
	if t.Digest.IsZero() {
		return ""
	}
	return t.Digest.String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := answers.get()
	defer answers.put(buf)
	// What json.Marshal writes, and a newline as an Encoder writes, into
	// one buffer kept between answers; the two answers of every call
	// without reflection.
	if err := encodeAnswer(buf, v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal"}}` + "\n")
	}
	w.Header()["Content-Type"] = typeJSON
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func encodeAnswer(buf *bytes.Buffer, v any) error {
	var b []byte
	var err error
	switch v := v.(type) {
	case wire.Ticket:
		b, err = v.AppendJSON(buf.AvailableBuffer())
	case wire.Result:
		b, err = v.AppendJSON(buf.AvailableBuffer())
	default:
		return json.NewEncoder(buf).Encode(v)
	}
	if err != nil {
		return err
	}
	buf.Write(b)
	return buf.WriteByte('\n')
}

func writeError(w http.ResponseWriter, err error) {
	r := classifyAgent(err)
	var e wire.Error
	e.Error.Code, e.Error.Also, e.Error.Message = r.Code, r.Also, r.Message
	writeJSON(w, r.Status, e)
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
