package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/agentstepup/asu/stepup"
)

// Server timeouts. WriteTimeout is added to the longest a handler
// legitimately takes (a long poll), so a long poll is never cut off.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 15 * time.Second
	IdleTimeout       = 60 * time.Second
	WriteMargin       = 30 * time.Second
	MaxHeaderBytes    = 16 << 10
	ShutdownGrace     = 10 * time.Second
)

// NewServer returns an http.Server for h with every timeout set: headers
// within [ReadHeaderTimeout], the whole request within [ReadTimeout], the
// answer within longest + [WriteMargin] (longest is the long-poll bound,
// [AgentAPI.MaxWait], or zero for the approval site), idle connections
// closed after [IdleTimeout], headers at most [MaxHeaderBytes]. An
// executor that outlives WriteTimeout still finishes, and is recorded; only
// its answer to the runtime is lost, and Wait then shows the ticket
// executed.
func NewServer(h http.Handler, longest time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      longest + WriteMargin,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Drainer is a handler with requests that would hold a shutdown up, such as
// [AgentAPI]'s long polls; [Serve] asks it to end them.
type Drainer interface {
	Drain()
}

// Serve serves srv on ln until ctx ends, then shuts down gracefully: it
// stops accepting, drains srv.Handler if it is a [Drainer], and waits up to
// [ShutdownGrace] for requests in flight before closing what remains. It
// returns nil after a shutdown that ctx asked for.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	if srv == nil || ln == nil {
		return fmt.Errorf("%w: serve needs a server and a listener", stepup.ErrConfig)
	}
	if d, ok := srv.Handler.(Drainer); ok {
		srv.RegisterOnShutdown(d.Drain)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("gateway: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("gateway: shutdown: %w", err)
	}
	return nil
}
