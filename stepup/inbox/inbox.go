package inbox

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
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

// Desk is what the inbox uses of a gate's desk: an approver's queue, the
// prompt of one ticket (its card, who may decide it, and the requests
// the passkey signs to approve or deny it), and the record of sign-outs
// in the gate's store, which every replica sharing the store reads
// ([gate.Desk.EndSession] and [gate.Desk.SessionEnded]). [*gate.Desk]
// implements it. The inbox has no way to decide a ticket: approvals and
// denials go to the approval site, signed over the ticket's own
// challenge.
type Desk interface {
	Queue(ctx context.Context, approver string, limit int) ([]plug.Entry, error)
	Prompt(ctx context.Context, id stepup.TicketID) (gate.Prompt, error)
	EndSession(ctx context.Context, id []byte, until time.Time) error
	SessionEnded(ctx context.Context, id []byte, until time.Time) (bool, error)
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
	// key may serve: the MAC is labelled apart from its others. Sign-out
	// ends a session on every replica whose Desk shares the gate's store,
	// and after a restart: it is recorded in the store, not only in the
	// process that signed out.
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
	// showing its card when the gate does not answer the showing
	// (default gate.DefaultDwell; negative: not at all). When it answers,
	// as it does, the page holds the button as long as the gate says
	// (its own dwell, gate.WithDwell), whatever Dwell is.
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
	Figures func(ctx context.Context) (figures.Report, error)
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
// checks the MAC, the expiry and the sign-outs recorded in the gate's
// store, and rechecks the credential, so a session dies when it expires,
// when its credential is revoked, or on sign-out, on every replica
// sharing the store.
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
	figures  func(ctx context.Context) (figures.Report, error)
	log      *slog.Logger
	sessions *sessions
	https    bool // the origin is https: the cookie is Secure
	handler  http.Handler
	static   map[string]asset

	mu      sync.Mutex
	open    map[string]int // open streams per approver
	total   int
	drained chan struct{}
	drain   sync.Once
}

// Link returns the inbox page's URL on origin.
func Link(origin, prefix string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return strings.TrimSuffix(origin, "/") + prefix + "/"
}

// asset is one of the page's static files.
type asset struct {
	typ  string
	body []byte
}
