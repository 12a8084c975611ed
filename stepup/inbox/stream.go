package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentstepup/asu/stepup/remote"
)

// writeWait bounds each write to a stream: a client that stops reading
// is dropped rather than held.
const writeWait = 10 * time.Second

// streamJSON is a queue event's data: [queueJSON] with its entries already
// encoded.
type streamJSON struct {
	User             string          `json:"user"`
	SessionExpiresAt time.Time       `json:"session_expires_at"`
	Now              time.Time       `json:"now"`
	Entries          json.RawMessage `json:"entries"`
}

// events streams the session's queue as server-sent events: a "queue"
// event with the whole queue at once and whenever it changes, a comment
// every heartbeat, and an "end" event when the session ends (expired,
// signed out, credential revoked), after which the stream closes.
func (in *Inbox) events(w http.ResponseWriter, r *http.Request) {
	s, err := in.current(r)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	release, err := in.acquire(s.user)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	defer release()
	ctx := r.Context()
	rc := http.NewResponseController(w)
	// Each write gets its own deadline, so the server's WriteTimeout
	// does not end the stream, and a client that stops reading does.
	send := func(chunk string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := io.WriteString(w, chunk); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	in.log.Info("inbox stream opened", "approver", s.user)
	defer in.log.Info("inbox stream closed", "approver", s.user)
	if !send("retry: 3000\n\n") {
		return
	}

	cache := prompts{}
	var last []byte
	push := func() bool {
		entries, err := in.list(ctx, s.user, cache)
		if err != nil {
			if ctx.Err() == nil {
				in.log.Warn("inbox queue", "approver", s.user, "error", err.Error())
			}
			return ctx.Err() == nil // keep the stream; the next poll tries again
		}
		body, err := json.Marshal(entries)
		if err != nil || bytes.Equal(body, last) {
			return true
		}
		last = body
		data, err := json.Marshal(streamJSON{User: s.user, SessionExpiresAt: s.expires, Now: in.now(), Entries: body})
		if err != nil {
			return true
		}
		return send("event: queue\ndata: " + string(data) + "\n\n")
	}
	if !push() {
		return
	}
	poll := time.NewTicker(in.poll)
	defer poll.Stop()
	beat := time.NewTicker(in.beat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.drained:
			return // the browser reconnects, to this replica or another
		case <-beat.C:
			if !send(": keep-alive\n\n") {
				return
			}
		case <-poll.C:
			if err := in.recheck(ctx, s); err != nil {
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, errNoSession) {
					send("event: end\ndata: {\"reason\":\"session_ended\"}\n\n")
					return
				}
				// Not known to stand (recheck logged why): send nothing
				// until it is again.
				continue
			}
			if !push() {
				return
			}
		}
	}
}

// acquire takes one of user's streams, or refuses with remote.ErrBusy
// when they, or the inbox, have as many open as allowed, and with
// remote.ErrUnavailable once the inbox is draining.
func (in *Inbox) acquire(user string) (release func(), err error) {
	select {
	case <-in.drained:
		return nil, fmt.Errorf("%w: the inbox is shutting down", remote.ErrUnavailable)
	default:
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.open[user] >= in.perUser || in.total >= in.streams {
		return nil, fmt.Errorf("%w: too many open streams", remote.ErrBusy)
	}
	in.open[user]++
	in.total++
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.open[user]--; in.open[user] == 0 {
			delete(in.open, user)
		}
		in.total--
	}, nil
}

// Streams returns how many event streams are open.
func (in *Inbox) Streams() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.total
}
