package httpexec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
)

// Defaults of [Options].
const (
	DefaultTimeout          = 10 * time.Second
	DefaultRetries          = 2
	DefaultBackoff          = 250 * time.Millisecond
	DefaultMaxResponseBytes = 1 << 20
	// MaxRetries bounds [Options].Retries.
	MaxRetries = 10
	// maxBackoff caps the wait between two attempts.
	maxBackoff = 10 * time.Second
)

// Options configure an [Executor]. Zero values mean the defaults.
type Options struct {
	// Timeout bounds one attempt, from sending the request to reading the
	// last byte of the answer (default [DefaultTimeout]).
	Timeout time.Duration
	// Retries is how many times an attempt that got no answer, a 5xx or a
	// 429 is tried again, with the same body and idempotency key (default
	// [DefaultRetries]; negative: none; at most [MaxRetries]).
	Retries int
	// Backoff is the wait before the first retry; each next one doubles,
	// up to 10 s, with up to a quarter more at random so that executors
	// retrying together spread out (default [DefaultBackoff]).
	Backoff time.Duration
	// MaxResponseBytes bounds the answer read from the tool (default
	// [DefaultMaxResponseBytes]); a longer one fails with
	// [ErrResponseTooLarge].
	MaxResponseBytes int64
	// Client sends the requests (default: a client of its own that follows
	// no redirects). A client given here should not follow redirects
	// either: the signature names no URL, but the tool's does.
	Client *http.Client
	// Now is the clock the signature's timestamp is read from (default
	// time.Now).
	Now func() time.Time
}

// Executor runs one tool's approved effects by POSTing them, signed, to
// the tool's URL. It implements the gate's Executor; register it with
// gate.WithExecutor(tool, e). It is safe for concurrent use.
type Executor struct {
	tool    string
	target  string
	secret  []byte
	timeout time.Duration
	retries int
	backoff time.Duration
	maxResp int64
	client  *http.Client
	now     func() time.Time
}

// New returns the executor of tool that POSTs to target (http or https)
// signing with secret (at least [MinSecretBytes], shared with the tool
// alone or with every tool of the service). opts may be nil.
func New(tool, target string, secret []byte, opts *Options) (*Executor, error) {
	if !validName(tool) {
		return nil, fmt.Errorf("httpexec: tool name %q is not 1 to %d printable ASCII characters", tool, maxNameBytes)
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("httpexec: tool %s: the URL must be http or https with a host", tool)
	}
	if u.User != nil {
		return nil, fmt.Errorf("httpexec: tool %s: the URL must not carry credentials: the signature authenticates the gate", tool)
	}
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("tool %s: %w", tool, ErrSecret)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Executor{tool: tool, target: target, secret: bytes.Clone(secret),
		timeout: DefaultTimeout, retries: DefaultRetries, backoff: DefaultBackoff,
		maxResp: DefaultMaxResponseBytes, client: o.Client, now: o.Now}
	switch {
	case o.Timeout < 0 || o.Backoff < 0 || o.MaxResponseBytes < 0:
		return nil, fmt.Errorf("httpexec: tool %s: negative timeout, backoff or response bound", tool)
	case o.Retries > MaxRetries:
		return nil, fmt.Errorf("httpexec: tool %s: retries must be at most %d", tool, MaxRetries)
	}
	if o.Timeout > 0 {
		e.timeout = o.Timeout
	}
	if o.Retries != 0 {
		e.retries = max(o.Retries, 0)
	}
	if o.Backoff > 0 {
		e.backoff = o.Backoff
	}
	if o.MaxResponseBytes > 0 {
		e.maxResp = o.MaxResponseBytes
	}
	if e.client == nil {
		e.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// Execute POSTs effect e with idempotencyKey to the tool and returns the
// body of its 2xx answer. It re-seals e, so what is sent is the
// canonical effect whose digest was approved. The ticket id is sent when
// ctx carries it (plug.WithTicket). An attempt that gets no answer
// within the timeout, a 5xx or a 429 is tried again after a backoff,
// with the same body and key and a fresh timestamp, until the retries
// run out or ctx ends; any other answer is final.
func (e *Executor) Execute(ctx context.Context, eff canon.Effect, idempotencyKey string) ([]byte, error) {
	if !validName(idempotencyKey) {
		return nil, fmt.Errorf("%w: tool %s: the idempotency key is not 1 to %d printable ASCII characters", ErrMalformed, e.tool, maxNameBytes)
	}
	if eff.Tool != e.tool {
		return nil, fmt.Errorf("%w: the executor of %s was handed an effect of another tool", ErrMalformed, e.tool)
	}
	s, err := canon.Seal(eff)
	if err != nil {
		return nil, fmt.Errorf("httpexec: tool %s: %w", e.tool, err)
	}
	ticket, _ := plug.TicketOf(ctx)
	body := encode(s, idempotencyKey, string(ticket))
	var last error
	for attempt := 0; ; attempt++ {
		out, retry, err := e.try(ctx, body, idempotencyKey)
		if err == nil {
			return out, nil
		}
		last = err
		if !retry || attempt >= e.retries {
			return nil, last
		}
		if !sleep(ctx, e.wait(attempt)) {
			return nil, fmt.Errorf("%w (then the context ended: %v)", last, context.Cause(ctx))
		}
	}
}

// try makes one attempt; retry says whether another may follow.
func (e *Executor) try(ctx context.Context, body []byte, key string) (out []byte, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.target, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: tool %s: the request could not be made", ErrUnreachable, e.tool)
	}
	t := e.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderTool, e.tool)
	req.Header.Set(HeaderIdempotencyKey, key)
	req.Header.Set(HeaderSignature, formatSignature(t, sign(e.secret, t, e.tool, key, body)))
	resp, err := e.client.Do(req)
	if err != nil {
		// The error names the URL; the operator configured it, but it is
		// not repeated into audit rows.
		return nil, true, fmt.Errorf("%w: tool %s: %s", ErrUnreachable, e.tool, reason(ctx, err))
	}
	defer resp.Body.Close()
	out, err = io.ReadAll(io.LimitReader(resp.Body, e.maxResp+1))
	switch {
	case err != nil:
		return nil, true, fmt.Errorf("%w: tool %s: reading the answer: %s", ErrUnreachable, e.tool, reason(ctx, err))
	case resp.StatusCode/100 == 2 && int64(len(out)) > e.maxResp:
		return nil, false, fmt.Errorf("%w: tool %s: more than %d bytes", ErrResponseTooLarge, e.tool, e.maxResp)
	case resp.StatusCode/100 == 2:
		return out, false, nil
	case retryable(resp.StatusCode):
		return nil, true, fmt.Errorf("%w: tool %s: status %d", ErrToolFailed, e.tool, resp.StatusCode)
	}
	return nil, false, fmt.Errorf("%w: tool %s: status %d (final)", ErrToolFailed, e.tool, resp.StatusCode)
}

// retryable reports whether an answer with status may be tried again: a
// 5xx or a 429, and nothing else. A status past 599 is no 5xx: it is
// final, like every other answer the tool chose.
func retryable(status int) bool {
	return status/100 == 5 || status == http.StatusTooManyRequests
}

// reason says why an attempt got no answer, without the error's type.
func reason(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timed out"
	case ctx.Err() != nil:
		return "canceled"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// wait is the backoff before retry attempt+1.
func (e *Executor) wait(attempt int) time.Duration {
	d := e.backoff
	for range attempt {
		if d >= maxBackoff/2 {
			d = maxBackoff
			break
		}
		d *= 2
	}
	d = min(d, maxBackoff)
	var b [8]byte
	_, _ = rand.Read(b[:])
	return d + time.Duration(binary.BigEndian.Uint64(b[:])%uint64(d/4+1))
}

// sleep waits d, or less if ctx ends first; it reports whether it waited
// the whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
