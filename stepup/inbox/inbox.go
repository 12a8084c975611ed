package inbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
)

// Defaults and bounds of [Options].
const (
	// DefaultPrefix is the path the inbox is served under.
	DefaultPrefix = "/inbox"
	// DefaultApprovePath is where the approval site serves a ticket's page
	// and takes its decisions: gateway.Site's /approve/{id}.
	DefaultApprovePath = "/approve/"
	// DefaultSessionTTL is how long a sign-in lasts.
	DefaultSessionTTL = 30 * time.Minute
	// MaxSessionTTL is the longest session [Options] accepts.
	MaxSessionTTL = 12 * time.Hour
	// DefaultPoll is how often a stream reads the approver's queue.
	DefaultPoll = time.Second
	// DefaultHeartbeat is how often a quiet stream sends a comment, so
	// proxies and browsers keep it open.
	DefaultHeartbeat = 15 * time.Second
	// DefaultStreamsPerApprover bounds one approver's open streams (tabs
	// and devices); the next is refused with 429.
	DefaultStreamsPerApprover = 4
	// DefaultStreams bounds all open streams of one inbox.
	DefaultStreams = 1024
	// DefaultLimit is how many tickets a queue shows, soonest expiry
	// first.
	DefaultLimit = 50
	// MaxLimit is the largest Limit [Options] accepts.
	MaxLimit = 200
	// MinKeySize is the shortest session key [Options] accepts.
	MinKeySize = 32
)

// Desk is what the inbox reads of a gate's desk: an approver's queue and
// the prompt of one ticket (its card, who may decide it, and the
// requests the passkey signs to approve or deny it). [*gate.Desk]
// implements it. The inbox has no way to decide a ticket: approvals and
// denials go to the approval site, signed over the ticket's own
// challenge.
type Desk interface {
	Queue(ctx context.Context, approver string, limit int) ([]gate.Entry, error)
	Prompt(ctx context.Context, id stepup.TicketID) (gate.Prompt, error)
}

// SignIn is the passkey sign-in sessions are opened with; [*passkey.SignIn]
// implements it.
type SignIn interface {
	Begin(ctx context.Context) (json.RawMessage, string, error)
	Finish(ctx context.Context, state string, answer []byte) (passkey.SignedIn, error)
	Recheck(ctx context.Context, who passkey.SignedIn) error
}

var (
	_ Desk   = (*gate.Desk)(nil)
	_ SignIn = (*passkey.SignIn)(nil)
)

// Options tunes [New]; nil means defaults.
type Options struct {
	// Prefix is the path the inbox is mounted under (default
	// [DefaultPrefix]): mount the Inbox at Prefix + "/".
	Prefix string
	// ApprovePath is the path of the approval site's ticket pages, whose
	// posts approve and deny (default [DefaultApprovePath]). It is on the
	// same origin.
	ApprovePath string
	// SessionTTL is how long a sign-in lasts (default
	// [DefaultSessionTTL], at most [MaxSessionTTL]). Sessions are not
	// extended by use.
	SessionTTL time.Duration
	// Key MACs session cookies, at least [MinKeySize] bytes. Nil means a
	// random key per Inbox: sessions end when the process does, and
	// replicas behind one load balancer need a shared key. The gate's
	// key may serve: the MAC is labelled apart from its others.
	Key []byte
	// Clock is the clock sessions expire by (default time.Now).
	Clock func() time.Time
	// Poll is how often a stream reads the queue (default [DefaultPoll]);
	// Heartbeat how often a quiet stream sends a comment (default
	// [DefaultHeartbeat]).
	Poll, Heartbeat time.Duration
	// StreamsPerApprover bounds one approver's open streams (default
	// [DefaultStreamsPerApprover]); Streams bounds all of them (default
	// [DefaultStreams]).
	StreamsPerApprover, Streams int
	// Limit is how many tickets a queue shows (default [DefaultLimit], at
	// most [MaxLimit]).
	Limit int
	// Dwell is how long the page holds a ticket's approve button after
	// first showing its card (default gate.DefaultDwell; negative: not at
	// all). The gate enforces its own dwell (gate.WithDwell) whatever the
	// page does; the page only spares the approver a refusal, so set
	// Dwell to at least the gate's.
	Dwell time.Duration
	// Logger receives one line per sign-in, sign-out, refusal and stream.
	// Nil discards.
	Logger *slog.Logger
	// Figures, when set, gives the approval figures the page's header
	// shows the signed-in approver about themselves (approvals, approval
	// rate, median time to decision, a rubber-stamp warning), and that
	// Prefix/figures answers as JSON: the approver's own row, the figures
	// by effect class and overall, never another approver's. Pass the
	// gate's Admin().Metrics over a window, e.g. a week.
	Figures func(ctx context.Context) (receipt.ApprovalMetrics, error)
}

// Inbox is the approver's inbox on the approval site: an approver signs in
// with their passkey and sees every ticket they may decide, soonest
// expiry first, updated live, each with its card, the time left and who
// else may decide it, and buttons that approve or deny it on the approval
// site with the passkey, signing that ticket's challenge.
//
//	GET  {prefix}/               the page
//	GET  {prefix}/static/{name}  its script and style
//	POST {prefix}/signin/begin   no body: {"options": request options, "state": "..."}
//	POST {prefix}/signin         {"state": "...", "credential": assertion}: sets the session cookie
//	POST {prefix}/signout        no body: ends the session
//	GET  {prefix}/session        {"user", "expires_at"} of the session
//	GET  {prefix}/queue          the session's queue, as JSON
//	GET  {prefix}/events         the queue as server-sent events
//
// A session is a cookie (HttpOnly, SameSite=Strict, Secure and
// "__Host-" prefixed on an https origin) holding the approver, the
// credential that signed in and the expiry, under a MAC. Every request
// checks the MAC and the expiry and rechecks the credential, so a session
// dies when it expires, when its credential is revoked, or on sign-out.
// A session only lists: no route of the inbox decides a ticket, and the
// approval site ignores the cookie.
//
// Every response carries the approval site's headers: a strict CSP (no
// inline script or style), frame-ancestors 'none', no-store. Posts must
// come from the relying party's origin and carry JSON; bodies are
// bounded. Streams are bounded per approver and in all, and end when the
// session does.
type Inbox struct {
	desk     Desk
	signIn   SignIn
	rp       passkey.RelyingParty
	prefix   string
	approve  string
	ttl      time.Duration
	now      func() time.Time
	poll     time.Duration
	beat     time.Duration
	perUser  int
	streams  int
	limit    int
	dwell    time.Duration
	figures  func(ctx context.Context) (receipt.ApprovalMetrics, error)
	log      *slog.Logger
	sessions *sessions
	secure   bool // the origin is https: the cookie is Secure
	handler  http.Handler
	static   map[string]asset

	mu      sync.Mutex
	open    map[string]int // open streams per approver
	total   int
	drained chan struct{}
	drain   sync.Once
}

// New returns the inbox of desk's approvers, signing them in with signIn,
// served on rp.Origin (the approval site's origin, whose relying party
// the passkeys are scoped to).
func New(desk Desk, signIn SignIn, rp passkey.RelyingParty, opts *Options) (*Inbox, error) {
	if desk == nil || signIn == nil {
		return nil, fmt.Errorf("%w: inbox needs a desk and a sign-in", stepup.ErrConfig)
	}
	u, err := url.Parse(rp.Origin)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Path != "" {
		return nil, fmt.Errorf("%w: inbox needs the relying party's origin", stepup.ErrConfig)
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	in := &Inbox{desk: desk, signIn: signIn, rp: rp, secure: u.Scheme == "https",
		prefix: DefaultPrefix, approve: DefaultApprovePath, ttl: DefaultSessionTTL, now: time.Now,
		poll: DefaultPoll, beat: DefaultHeartbeat, perUser: DefaultStreamsPerApprover,
		streams: DefaultStreams, limit: DefaultLimit, dwell: gate.DefaultDwell, log: o.Logger, figures: o.Figures,
		open: map[string]int{}, drained: make(chan struct{})}
	if err := in.configure(o); err != nil {
		return nil, err
	}
	if in.log == nil {
		in.log = slog.New(slog.DiscardHandler)
	}
	key := o.Key
	if key == nil {
		key = make([]byte, MinKeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
	}
	in.sessions = newSessions(key)
	if in.static, err = assets(); err != nil {
		return nil, err
	}
	in.handler = secure(in.routes())
	return in, nil
}

// configure applies o's non-zero fields, refusing unusable ones.
func (in *Inbox) configure(o Options) error {
	bad := func(what string) error { return fmt.Errorf("%w: inbox: %s", stepup.ErrConfig, what) }
	if o.Prefix != "" {
		if !strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/") || !plainPath(o.Prefix) {
			return bad("prefix must be a path like /inbox")
		}
		in.prefix = o.Prefix
	}
	if o.ApprovePath != "" {
		if !strings.HasPrefix(o.ApprovePath, "/") || !strings.HasSuffix(o.ApprovePath, "/") || !plainPath(o.ApprovePath) {
			return bad("approve path must be a path like /approve/")
		}
		in.approve = o.ApprovePath
	}
	switch {
	case o.SessionTTL < 0 || o.SessionTTL > MaxSessionTTL:
		return bad(fmt.Sprintf("session TTL must be positive and at most %s", MaxSessionTTL))
	case o.Key != nil && len(o.Key) < MinKeySize:
		return bad(fmt.Sprintf("key must be at least %d bytes", MinKeySize))
	case o.Poll < 0 || o.Heartbeat < 0 || o.StreamsPerApprover < 0 || o.Streams < 0:
		return bad("poll, heartbeat and stream bounds must not be negative")
	case o.Limit < 0 || o.Limit > MaxLimit:
		return bad(fmt.Sprintf("limit must be at most %d", MaxLimit))
	case o.Dwell > gate.MaxDwell:
		return bad(fmt.Sprintf("dwell must be at most %s", gate.MaxDwell))
	}
	switch {
	case o.Dwell < 0:
		in.dwell = 0
	case o.Dwell > 0:
		in.dwell = o.Dwell
	}
	if o.SessionTTL > 0 {
		in.ttl = o.SessionTTL
	}
	if o.Clock != nil {
		in.now = o.Clock
	}
	if o.Poll > 0 {
		in.poll = o.Poll
	}
	if o.Heartbeat > 0 {
		in.beat = o.Heartbeat
	}
	if o.StreamsPerApprover > 0 {
		in.perUser = o.StreamsPerApprover
	}
	if o.Streams > 0 {
		in.streams = o.Streams
	}
	if o.Limit > 0 {
		in.limit = o.Limit
	}
	return nil
}

// plainPath reports whether p holds only characters that need no
// escaping in a URL path or an HTML attribute.
func plainPath(p string) bool {
	return strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" &&
		!strings.Contains(p, "//") && !strings.Contains(p, "..")
}

func (in *Inbox) routes() http.Handler {
	mux := http.NewServeMux()
	p := in.prefix
	mux.HandleFunc("GET "+p+"/{$}", in.page)
	mux.HandleFunc("GET "+p+"/static/{name}", in.asset)
	mux.HandleFunc("POST "+p+"/signin/begin", in.sameOrigin(in.begin))
	mux.HandleFunc("POST "+p+"/signin", in.sameOrigin(in.finish))
	mux.HandleFunc("POST "+p+"/signout", in.sameOrigin(in.signOut))
	mux.HandleFunc("GET "+p+"/session", in.fromPage(in.session))
	mux.HandleFunc("GET "+p+"/figures", in.fromPage(in.figuresJSON))
	mux.HandleFunc("GET "+p+"/queue", in.fromPage(in.queue))
	mux.HandleFunc("GET "+p+"/events", in.fromPage(in.events))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		in.refuse(w, r, errNotFound)
	})
	return mux
}

// ServeHTTP implements http.Handler.
func (in *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) { in.handler.ServeHTTP(w, r) }

// Prefix returns the path the inbox is served under: mount it at
// Prefix() + "/".
func (in *Inbox) Prefix() string { return in.prefix }

// Link returns the inbox page's URL on origin.
func Link(origin, prefix string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return strings.TrimSuffix(origin, "/") + prefix + "/"
}

// Drain ends every open stream and refuses new ones, so that a server's
// graceful shutdown does not wait on them; gateway.Serve calls it on a
// handler that has it. Browsers reconnect to another replica, or to
// this one once it restarts.
func (in *Inbox) Drain() {
	in.drain.Do(func() { close(in.drained) })
}
