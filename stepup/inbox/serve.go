package inbox

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
)

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
	in := &Inbox{desk: desk, signIn: signIn, rp: rp, https: u.Scheme == "https",
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
	in.sessions = newSessions(key, desk)
	if in.static, err = assets(); err != nil {
		return nil, err
	}
	in.handler = Secure(in.routes())
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

// Drain ends every open stream and refuses new ones, so that a server's
// graceful shutdown does not wait on them; gateway.Serve calls it on a
// handler that has it. Browsers reconnect to another replica, or to
// this one once it restarts.
func (in *Inbox) Drain() {
	in.drain.Do(func() { close(in.drained) })
}
