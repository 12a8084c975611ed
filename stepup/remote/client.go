package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
)

// maxResponseBytes bounds what the client reads of one answer.
const maxResponseBytes = 32 << 20

// maxAlso bounds the other sentinels' codes the client keeps of a
// refusal: the error table has fewer rows.
const maxAlso = 32

// DefaultMaxWait is the longest one long poll of Wait asks the server for:
// the gateway's default bound.
const DefaultMaxWait = 30 * time.Second

// A pending answer to a long poll within earlyAnswer means the server did
// not wait; the client pauses retryPause before asking again.
const (
	earlyAnswer = 100 * time.Millisecond
	retryPause  = 250 * time.Millisecond
)

// Client is a [stepup.Runtime] over the gateway's agent API: a Go runtime
// holds a Client exactly where it would hold an in-process *stepup.Gate.
// Refusals come back as *[Error] values that unwrap to the same stepup
// sentinels the gate returned, so errors.Is(err, stepup.ErrConsumed)
// holds on either side of the wire. A Client is safe for concurrent use.
type Client struct {
	// base is the base URL up to its path, escaped, without a trailing
	// slash: every request's URL is it and the request's segments.
	base  string
	token string
	authz []string // the Authorization header's value, made once
	hc    *http.Client
	poll  time.Duration
}

// Header values every request shares. net/http only reads a request's
// header values, so one slice serves them all.
var (
	acceptJSON = []string{"application/json"}
	typeJSON   = []string{"application/json"}
)

var (
	_ stepup.Runtime   = (*Client)(nil)
	_ stepup.Canceller = (*Client)(nil)
)

// NewClient returns a client of the agent API at baseURL (e.g.
// "http://127.0.0.1:8700") that authenticates with token. The base URL
// is a scheme, a host and at most a path: one with a query, a fragment
// or user information is refused, as none of them would be sent, and
// trailing slashes are dropped. A nil hc means a client without a
// timeout: each call is bounded by its context, and Wait by the server's
// long-poll bound.
//
// The client never follows a redirect, with hc too: it uses a copy of hc
// whose CheckRedirect stops at the first answer, and leaves hc as it was.
// net/http would send the token on to another port or scheme of the same
// host name (plain http among them), and any origin's answer would be
// taken as the gate's. A redirect fails the call with an *[Error] of the
// redirect's status that unwraps to [ErrInternal]: point baseURL at the
// gateway itself.
func NewClient(baseURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL must be an http or https URL", stepup.ErrConfig)
	}
	// Unescaped, '?' and '#' only ever start a query and a fragment.
	if strings.ContainsAny(baseURL, "?#") || u.User != nil {
		return nil, fmt.Errorf("%w: base URL must have no query, fragment or user information (the token authenticates)", stepup.ErrConfig)
	}
	if token == "" {
		return nil, fmt.Errorf("%w: empty runtime token", stepup.ErrConfig)
	}
	own := http.Client{}
	if hc != nil {
		own = *hc
	}
	own.CheckRedirect = stopAtRedirect
	// The path as written, escapes kept, less its trailing slashes: a
	// slash written escaped (%2F) is part of a segment, not the end of
	// the path.
	base := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() + strings.TrimRight(u.EscapedPath(), "/")
	return &Client{base: base, token: token, authz: []string{"Bearer " + token}, hc: &own, poll: DefaultMaxWait}, nil
}

// stopAtRedirect is every client's CheckRedirect: the redirect itself is
// the answer, which [Client.do] refuses.
func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Propose sends c to the gate and returns its ticket. As with the gate, a
// denial is a ticket with status denied and a reason, not an error.
func (c *Client) Propose(ctx context.Context, call stepup.Call) (stepup.Ticket, error) {
	body, err := proposeBody(call)
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("propose: %w: %v", ErrInvalid, err)
	}
	var t wire.Ticket
	if err := c.do(ctx, http.MethodPost, []string{"v1", "propose"}, nil, body, &t); err != nil {
		return stepup.Ticket{}, fmt.Errorf("propose: %w", err)
	}
	return ticket(t, "")
}

// Wait blocks until ticket id leaves pending or ctx ends, in long polls of
// at most the server's bound each. When ctx ends it returns the ticket as
// last read with ctx's error, as the gate does. An answer about another
// ticket than id fails with [ErrInternal].
func (c *Client) Wait(ctx context.Context, id stepup.TicketID) (stepup.Ticket, error) {
	var last stepup.Ticket
	for {
		d := c.poll
		if dl, ok := ctx.Deadline(); ok {
			d = min(d, time.Until(dl))
		}
		if d <= 0 {
			<-ctx.Done() // the deadline passed; its timer fires at once
			return last, ctx.Err()
		}
		q := url.Values{"timeout": {d.Round(time.Millisecond).String()}}
		start := time.Now()
		var t wire.Ticket
		err := c.do(ctx, http.MethodGet, ticketPath(id, "wait"), q, nil, &t)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, fmt.Errorf("wait: %w", err)
		}
		tk, err := ticket(t, id)
		if err != nil {
			return last, fmt.Errorf("wait: %w", err)
		}
		last = tk
		if tk.Status != stepup.StatusPending {
			return tk, nil
		}
		// A server that answers a long poll at once (it is draining) is
		// not hammered; one that answers at its own, shorter bound is
		// asked again at once.
		if time.Since(start) < earlyAnswer && d > time.Second {
			select {
			case <-ctx.Done():
				return last, ctx.Err()
			case <-time.After(retryPause):
			}
		}
	}
}

// Execute asks the gate to run ticket id, with no arguments: what runs is
// the call stored at Propose. An answer about another ticket than id
// fails with [ErrInternal] and no result: what ran, if anything, is not
// known from it.
func (c *Client) Execute(ctx context.Context, id stepup.TicketID) (stepup.Result, error) {
	var r wire.Result
	if err := c.do(ctx, http.MethodPost, ticketPath(id, "execute"), nil, nil, &r); err != nil {
		return stepup.Result{}, fmt.Errorf("execute: %w", err)
	}
	if err := about(id, r.Ticket); err != nil {
		return stepup.Result{}, fmt.Errorf("execute: %w", err)
	}
	return stepup.Result{Ticket: stepup.TicketID(r.Ticket), Output: r.Output, IdempotencyKey: r.IdempotencyKey}, nil
}

// Cancel withdraws pending ticket id (see [stepup.Canceller]); a ticket
// already decided fails with [stepup.ErrResolved], and an answer about
// another ticket than id with [ErrInternal].
func (c *Client) Cancel(ctx context.Context, id stepup.TicketID, reason string) (stepup.Ticket, error) {
	body, err := json.Marshal(wire.Cancel{Reason: reason})
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("cancel: %w: %v", ErrInvalid, err)
	}
	var t wire.Ticket
	if err := c.do(ctx, http.MethodPost, ticketPath(id, "cancel"), nil, body, &t); err != nil {
		return stepup.Ticket{}, fmt.Errorf("cancel: %w", err)
	}
	return ticket(t, id)
}

// ticketPath is the path of a ticket's route, as segments.
func ticketPath(id stepup.TicketID, op string) []string {
	return []string{"v1", "tickets", string(id), op}
}

// proposeBody is the JSON of call on the wire. Arguments canon takes are
// sent in canonical form, written once: encoding/json would check and
// copy them again as raw JSON, a pass that costs more than canonicalizing
// them. Any others go as encoding/json writes them, for the gate to
// refuse with its reasons.
func proposeBody(call stepup.Call) ([]byte, error) {
	args, err := canon.Canonicalize(call.Args)
	if err != nil {
		return json.Marshal(wire.FromCall(call))
	}
	w := wire.FromCall(call)
	// wire.Call's members in its order: tool, args, then the rest, whose
	// object always has a member (session is never omitted).
	out := make([]byte, 0, len(`{"tool":"","args":,`)+len(w.Tool)+len(args)+len(w.Session)+len(w.Principal.User)+
		len(w.Principal.Agent)+len(w.Task)+len(w.Rationale)+96)
	out = wire.AppendString(append(out, `{"tool":`...), w.Tool)
	out = append(append(out, `,"args":`...), args...)
	rest, err := w.Rest.AppendJSON(append(out, ','))
	if err != nil {
		return nil, err
	}
	// The rest's own brace goes: its members continue the call's object.
	return append(rest[:len(out)+1], rest[len(out)+2:]...), nil
}

// do sends one request to the path of segments (each sent as exactly one
// path segment, whatever it holds) and decodes a 200 answer into out, or
// returns the refusal as an *Error.
func (c *Client) do(ctx context.Context, method string, segments []string, q url.Values, body []byte, out any) error {
	var u strings.Builder
	u.Grow(len(c.base) + 64)
	u.WriteString(c.base)
	for _, seg := range segments {
		if seg == "" {
			// No ticket has an empty id, and an empty segment is no segment.
			return fmt.Errorf("%w: an empty path segment names nothing", stepup.ErrNotFound)
		}
		u.WriteByte('/')
		u.WriteString(escapeSegment(seg))
	}
	if e := q.Encode(); e != "" {
		u.WriteByte('?')
		u.WriteString(e)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	req.Header["Authorization"] = c.authz
	req.Header["Accept"] = acceptJSON
	if body != nil {
		req.Header["Content-Type"] = typeJSON
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err // the transport's error, with ctx's when ctx ended
	}
	defer resp.Body.Close()
	raw, err := wire.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1), resp.ContentLength, maxResponseBytes)
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %v", ErrInternal, err)
	}
	if len(raw) > maxResponseBytes {
		return fmt.Errorf("%w: answer larger than %d bytes", ErrInternal, maxResponseBytes)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// Never followed (see NewClient), and its body is not the gate's.
		return &Error{Status: resp.StatusCode, Code: CodeInternal,
			Message: "the server answered with a redirect, which the client does not follow: use the gateway's own URL"}
	}
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp.StatusCode, raw)
	}
	if err := decodeAnswer(raw, out); err != nil {
		return fmt.Errorf("%w: answer does not parse", ErrInternal)
	}
	return nil
}

// decodeAnswer reads an answer as json.Unmarshal does, the two answers of
// every call without reflection.
func decodeAnswer(raw []byte, out any) error {
	switch out := out.(type) {
	case *wire.Ticket:
		return wire.DecodeTicket(raw, out)
	case *wire.Result:
		return wire.DecodeResult(raw, out)
	}
	return json.Unmarshal(raw, out)
}

// escapeSegment escapes s as one path segment, sent escaped exactly once:
// "/" as %2F, and a segment of dots (which a server would read as a
// relative step) as %2E each.
func escapeSegment(s string) string {
	e := url.PathEscape(s)
	if strings.Trim(s, ".") == "" {
		e = strings.Repeat("%2E", len(s))
	}
	return e
}

// ticket reads a ticket from the wire that answers a request about
// ticket asked; "" (a proposal, which names no ticket yet) takes any id.
func ticket(w wire.Ticket, asked stepup.TicketID) (stepup.Ticket, error) {
	t, err := w.Ticket()
	if err != nil {
		return stepup.Ticket{}, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	if asked != "" {
		if err := about(asked, w.ID); err != nil {
			return stepup.Ticket{}, err
		}
	}
	return t, nil
}

// about refuses an answer about ticket got to a request about ticket
// asked: whoever answered (the gateway, or anything on its path) did not
// answer the question, and another ticket's status or result taken as
// asked's would run, or report, the wrong call.
func about(asked stepup.TicketID, got string) error {
	if got != string(asked) {
		return fmt.Errorf("%w: the answer is about another ticket than the one asked", ErrInternal)
	}
	return nil
}

// decodeError turns a refusal's body into an *Error; a body that is not
// the API's (a proxy's error page, say) keeps only its status.
func decodeError(status int, raw []byte) error {
	var e wire.Error
	if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == "" {
		code := CodeInternal
		for _, c := range codes {
			if c.Status == status && (status == http.StatusUnauthorized || status == http.StatusRequestEntityTooLarge) {
				code = c.Code
			}
		}
		return &Error{Status: status, Code: code}
	}
	if len(e.Error.Also) > maxAlso {
		e.Error.Also = e.Error.Also[:maxAlso]
	}
	return &Error{Status: status, Code: e.Error.Code, Also: e.Error.Also, Message: e.Error.Message}
}
