// Command service is a team's own tool behind the asu gateway: a tiny
// HTTP server that runs a tool's approved calls when, and only when, the
// gateway's signed request says so, and runs each approval once.
//
//	go run ./examples/service -addr 127.0.0.1:8790 -secret-file tool.secret
//
// It serves POST /{tool}, the URL a catalog's executor block names
// (examples/service/catalog.json). Each request is checked with
// httpexec.Verify against the secret the gateway signs with
// (-tool-secret-file there, one secret for every tool): the signature,
// its timestamp within five minutes, that it was signed for the tool its
// path names, and a body that is exactly the approved effect. The effect
// runs (here: one line printed) once per idempotency key: a key seen
// again is the same approval re-sent, after a lost answer or a crash,
// and gets the first answer again without running twice. A real tool
// keeps its keys in its own database, in the transaction of the effect.
//
// See the service quickstart in the repository's README.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentstepup/asu/stepup/httpexec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends; ready, when not nil, gets the listen address.
func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:8790", "listen `address`")
	secretFile := fs.String("secret-file", "", "`file` holding the secret the gateway signs requests with (-tool-secret-file there)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *secretFile == "" || fs.NArg() > 0 {
		return errors.New("usage: service -secret-file FILE [-addr 127.0.0.1:8790]")
	}
	b, err := os.ReadFile(*secretFile)
	if err != nil {
		return err
	}
	secret := []byte(strings.TrimSpace(string(b)))
	if len(secret) < httpexec.MinSecretBytes {
		return fmt.Errorf("%s: line 1: the secret is %d bytes; it must be at least %d", *secretFile, len(secret), httpexec.MinSecretBytes)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	t := newTools(secret, out, time.Now)
	srv := &http.Server{Handler: t, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	fmt.Fprintf(out, "tools: http://%s/{tool}, verifying the gateway's signature with %s\n", ln.Addr(), *secretFile)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// maxKeys bounds the idempotency keys kept in memory.
const maxKeys = 100_000

// tools runs the approved effects the gateway sends, once per key.
type tools struct {
	secret []byte
	out    io.Writer
	now    func() time.Time
	mu     sync.Mutex
	seen   map[string][]byte // idempotency key -> the first answer
}

func newTools(secret []byte, out io.Writer, now func() time.Time) *tools {
	return &tools{secret: secret, out: out, now: now, seen: map[string][]byte{}}
}

func (t *tools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tool, ok := strings.CutPrefix(r.URL.Path, "/")
	if !ok || tool == "" || strings.Contains(tool, "/") || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	// The path names the tool this request is for; Verify refuses a
	// request the gateway signed for any other, which under the secret
	// every tool shares would otherwise verify here.
	req, err := httpexec.Verify(r, tool, t.secret, httpexec.DefaultWindow, t.now())
	switch {
	case errors.Is(err, httpexec.ErrWrongTool):
		fmt.Fprintf(t.out, "refused a request for %s: %v\n", tool, err)
		http.Error(w, "refused: signed for another tool", http.StatusUnauthorized)
		return
	case err != nil:
		fmt.Fprintf(t.out, "refused a request for %s: %v\n", tool, err)
		http.Error(w, "refused: not a request the gateway signed", http.StatusUnauthorized)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock() // one effect at a time: a repeat waits for the first answer
	if answer, ok := t.seen[req.IdempotencyKey]; ok {
		fmt.Fprintf(t.out, "repeat of %s ticket %s key %s: answered again, not run again\n", req.Tool, req.Ticket, req.IdempotencyKey)
		writeAnswer(w, answer)
		return
	}
	if len(t.seen) >= maxKeys {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	// The effect: this tool only says what it runs. The arguments are the
	// approved ones, exactly as the approver's passkey signed them.
	fmt.Fprintf(t.out, "ran %s %s for %s (ticket %s, key %s, digest %s)\n", req.Tool, req.Effect.Args,
		req.Effect.Principal.User, req.Ticket, req.IdempotencyKey, req.Digest.Short())
	answer, _ := json.Marshal(map[string]any{"ok": true, "tool": req.Tool, "digest": req.Digest.String()})
	t.seen[req.IdempotencyKey] = answer
	writeAnswer(w, answer)
}

func writeAnswer(w http.ResponseWriter, answer []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(answer)
}
