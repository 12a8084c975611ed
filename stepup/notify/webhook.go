package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of [Webhook.Notify]. Neither means the ticket is in trouble: it
// stays pending and shows in the approvers' queue. Log them and go on.
var (
	// ErrQueueFull means the delivery queue was full: the Notice was
	// dropped (and counted in [Stats].Dropped) without waiting.
	ErrQueueFull = errors.New("notify: queue full, notice dropped")
	// ErrClosed means the Webhook was closed.
	ErrClosed = errors.New("notify: webhook closed")
)

// WebhookOptions tunes a [Webhook]; nil or zero fields take the defaults.
type WebhookOptions struct {
	// Client sends the requests. The default is a client of its own that
	// follows no redirects (a redirect is a failed delivery) and whose idle
	// connections Close closes.
	Client *http.Client
	// Queue is how many Notices may wait for a worker (default 256).
	Queue int
	// Workers is how many deliveries run at once (default 2).
	Workers int
	// Attempts bounds the tries of one delivery, the first included
	// (default 5). Only network errors, 429 and 5xx answers are retried.
	Attempts int
	// AttemptTimeout bounds each try (default 10 s).
	AttemptTimeout time.Duration
	// Backoff is the wait before the second try (default 1 s); each later
	// wait doubles, up to MaxBackoff (default 1 min), and is then drawn at
	// random between half and all of that.
	Backoff, MaxBackoff time.Duration
	// Now is the clock the signatures' timestamps come from (default
	// time.Now).
	Now func() time.Time
	// Logger receives one record per delivery that failed for good, with
	// the delivery id, the attempts and the last status or error; never
	// the secret or the body. Nil logs nothing.
	Logger *slog.Logger
}

// Stats counts what a [Webhook] did with the Notices it was given.
type Stats struct {
	// Queued Notices were accepted by Notify.
	Queued uint64
	// Delivered Notices were answered 2xx.
	Delivered uint64
	// Failed Notices were given up: a final non-2xx answer, Attempts
	// exhausted, or Close giving up on them.
	Failed uint64
	// Dropped Notices met a full queue.
	Dropped uint64
	// Retries counts tries after the first.
	Retries uint64
}

// Webhook is a [Notifier] that POSTs each Notice as JSON to one URL,
// signed with a shared secret (see the package documentation for the
// format). Notify only enqueues; workers deliver in the background with
// bounded retries. Call Close to stop them. A Webhook is safe for
// concurrent use.
type Webhook struct {
	url       string
	secret    []byte
	client    *http.Client
	ownClient bool
	o         WebhookOptions

	mu     sync.RWMutex // guards closed and sends on queue
	closed bool
	queue  chan job

	stop      context.Context // cancelled when Close gives up waiting
	cancel    context.CancelFunc
	workers   sync.WaitGroup
	closeOnce sync.Once
	done      chan struct{}

	queued, delivered, failed, dropped, retries atomic.Uint64
}

// job is one Notice to deliver, encoded once.
type job struct {
	id   string
	body []byte
}

// NewWebhook returns a Webhook posting to target, an absolute http or
// https URL, signing with secret (at least [MinSecretBytes] bytes, which
// the receiver shares), and starts its workers. opts may be nil.
func NewWebhook(target string, secret []byte, opts *WebhookOptions) (*Webhook, error) {
	if len(secret) < MinSecretBytes {
		return nil, ErrSecret
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("notify: webhook URL is not an absolute http(s) URL")
	}
	var o WebhookOptions
	if opts != nil {
		o = *opts
	}
	o.Queue = positive(o.Queue, 256)
	o.Workers = positive(o.Workers, 2)
	o.Attempts = positive(o.Attempts, 5)
	o.AttemptTimeout = positive(o.AttemptTimeout, 10*time.Second)
	o.Backoff = positive(o.Backoff, time.Second)
	o.MaxBackoff = max(positive(o.MaxBackoff, time.Minute), o.Backoff)
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &Webhook{url: target, secret: bytes.Clone(secret), client: o.Client, o: o,
		queue: make(chan job, o.Queue), done: make(chan struct{})}
	if w.client == nil {
		w.client = &http.Client{
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		w.ownClient = true
	}
	w.stop, w.cancel = context.WithCancel(context.Background())
	w.workers.Add(o.Workers)
	for range o.Workers {
		go w.work()
	}
	go func() { w.workers.Wait(); close(w.done) }()
	return w, nil
}

func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Notify validates n and queues it for delivery, without waiting: it
// fails with [ErrInvalidNotice], [ErrQueueFull] (n is dropped and
// counted) or [ErrClosed], and otherwise returns nil at once. Delivery
// does not depend on ctx, which may end as soon as Notify returns.
func (w *Webhook) Notify(_ context.Context, n Notice) error {
	if err := n.Validate(); err != nil {
		return err
	}
	n.ExpiresAt = n.ExpiresAt.UTC()
	id, err := newDeliveryID()
	if err != nil {
		return err
	}
	body, err := json.Marshal(wire{Delivery: id, Notice: n})
	if err != nil {
		return fmt.Errorf("%w: cannot encode", ErrInvalidNotice)
	}
	if len(body) > MaxBodyBytes {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidNotice, MaxBodyBytes)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	select {
	case w.queue <- job{id: id, body: body}:
		w.queued.Add(1)
		return nil
	default:
		w.dropped.Add(1)
		return ErrQueueFull
	}
}

// Stats returns the counts so far.
func (w *Webhook) Stats() Stats {
	return Stats{Queued: w.queued.Load(), Delivered: w.delivered.Load(), Failed: w.failed.Load(),
		Dropped: w.dropped.Load(), Retries: w.retries.Load()}
}

// Close stops accepting Notices and waits for the queued ones to be
// delivered, or given up, until ctx ends; then it abandons the rest
// (counted as failed), interrupting tries in flight, and returns
// ctx.Err(). Either way no worker outlives Close. Close may be called
// more than once.
func (w *Webhook) Close(ctx context.Context) error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		close(w.queue)
		w.mu.Unlock()
	})
	var err error
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
		err = ctx.Err()
	}
	w.cancel()
	if w.ownClient {
		w.client.CloseIdleConnections()
	}
	return err
}

func (w *Webhook) work() {
	defer w.workers.Done()
	for j := range w.queue {
		if w.stop.Err() != nil {
			w.failed.Add(1)
			continue
		}
		w.deliver(j)
	}
}

// deliver tries j up to Attempts times.
func (w *Webhook) deliver(j job) {
	var last string
	for attempt := 1; ; attempt++ {
		status, err := w.try(j)
		switch {
		case err == nil && status/100 == 2:
			w.delivered.Add(1)
			return
		case err != nil:
			last = "network error"
			if w.stop.Err() != nil {
				last = "abandoned at close"
			}
		default:
			last = fmt.Sprintf("status %d", status)
		}
		retry := w.stop.Err() == nil && (err != nil || status == http.StatusTooManyRequests || status/100 == 5)
		if !retry || attempt == w.o.Attempts || !w.sleep(w.backoff(attempt)) {
			w.failed.Add(1)
			if w.o.Logger != nil {
				w.o.Logger.Warn("notify: webhook delivery failed",
					slog.String("delivery", j.id), slog.Int("attempts", attempt), slog.String("last", last))
			}
			return
		}
		w.retries.Add(1)
	}
}

// try makes one attempt, signed with the current time, and returns the
// answer's status.
func (w *Webhook) try(j job) (int, error) {
	ctx, cancel := context.WithTimeout(w.stop, w.o.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(j.body))
	if err != nil {
		return 0, err
	}
	t := w.o.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "asu-notify/1")
	req.Header.Set(HeaderDelivery, j.id)
	req.Header.Set(HeaderSignature, formatSignature(t, sign(w.secret, t, j.body)))
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	// Read a little of the answer so the connection can be reused; never
	// all of it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// backoff is the wait after the attempt-th try: Backoff doubled per try,
// capped at MaxBackoff, drawn from its upper half.
func (w *Webhook) backoff(attempt int) time.Duration {
	d := w.o.Backoff
	for i := 1; i < attempt && d < w.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.o.MaxBackoff)
	var b [8]byte
	_, _ = rand.Read(b[:])
	half := d / 2
	return half + time.Duration(binary.BigEndian.Uint64(b[:])%uint64(half+1))
}

// sleep waits d, or less if the Webhook is abandoned; it reports whether
// the full wait passed.
func (w *Webhook) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stop.Done():
		return false
	}
}

// newDeliveryID returns 16 random bytes in hex.
func newDeliveryID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("notify: no randomness: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
