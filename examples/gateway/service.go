package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup/httpexec"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// serviceOptions are the flags that make the gateway a service a team
// runs: its tools reached over HTTP, a webhook telling approvers, and an
// operator listener that needs a token.
type serviceOptions struct {
	// HTTP tools: each -tool-url TOOL=URL runs TOOL's approved calls by a
	// signed POST to URL (package httpexec), with the secret in
	// -tool-secret-file.
	toolURLs       multiFlag
	toolSecretFile string
	toolTimeout    time.Duration
	toolRetries    int
	// httpTools are the HTTP executors to build, from -tool-url or from a
	// catalog's executor blocks.
	httpTools []HTTPTool

	webhook, webhookSecretFile string
	operatorTokenFile          string

	vig vigilance // practice requests, confirmation, a second person (vigilance.go)
}

// HTTPTool is one tool the gateway runs by POSTing its approved effects
// to URL (package httpexec): the executor block of a catalog's tool, or
// one -tool-url flag.
type HTTPTool struct {
	Tool    string
	URL     string
	Timeout time.Duration // one attempt (0: httpexec.DefaultTimeout)
	Retries int           // attempts after the first that got no answer, a 5xx or a 429 (0: none), as a catalog's "retries"
	// SecretFile holds the tool's own secret; empty means the service's
	// (-tool-secret-file).
	SecretFile string
}

// serviceFlags adds the service's flags to fs.
func serviceFlags(fs *flag.FlagSet, o *serviceOptions) {
	fs.Var(&o.toolURLs, "tool-url", "`TOOL=URL`: run TOOL's approved calls by a signed POST to URL (repeatable)")
	fs.StringVar(&o.toolSecretFile, "tool-secret-file", "", "`file` holding the secret that signs requests to the tools (created, mode 0600, if missing)")
	fs.DurationVar(&o.toolTimeout, "tool-timeout", httpexec.DefaultTimeout, "`time` one attempt to reach a tool may take")
	fs.IntVar(&o.toolRetries, "tool-retries", httpexec.DefaultRetries, "`times` a tool that did not answer, or answered 5xx or 429, is tried again with the same idempotency key")
	fs.StringVar(&o.webhook, "webhook", "", "`URL` to POST a signed notice to when a ticket waits for a person")
	fs.StringVar(&o.webhookSecretFile, "webhook-secret-file", "", "`file` holding the webhook's shared secret (32 bytes or more)")
	fs.StringVar(&o.operatorTokenFile, "operator-token-file", "", "`file` holding the bearer token the -metrics listener requires")
	vigilanceFlags(fs, &o.vig)
}

// resolve turns the -tool-url flags into httpTools and checks them
// against the catalog's tools.
func (o *serviceOptions) resolve(catalogTools []string) error {
	for _, v := range o.toolURLs {
		tool, u, ok := strings.Cut(v, "=")
		if !ok || tool == "" || u == "" {
			return fmt.Errorf("-tool-url %q: want TOOL=URL, e.g. issue_refund=http://127.0.0.1:8790/issue_refund", v)
		}
		o.httpTools = append(o.httpTools, HTTPTool{Tool: tool, URL: u, Timeout: o.toolTimeout, Retries: o.toolRetries})
	}
	seen := map[string]bool{}
	for _, t := range o.httpTools {
		switch {
		case seen[t.Tool]:
			return fmt.Errorf("-tool-url %s: the tool has two URLs", t.Tool)
		case !contains(catalogTools, t.Tool):
			return fmt.Errorf("-tool-url %s: the catalog has no such tool (it has %s)", t.Tool, strings.Join(catalogTools, ", "))
		}
		seen[t.Tool] = true
	}
	if len(o.httpTools) > 0 && o.toolSecretFile == "" {
		for _, t := range o.httpTools {
			if t.SecretFile == "" {
				return fmt.Errorf("tool %s is run over HTTP (its executor block or -tool-url): give -tool-secret-file FILE, the secret the tool verifies requests with", t.Tool)
			}
		}
	}
	if o.webhook != "" && o.webhookSecretFile == "" {
		return errors.New("-webhook: give -webhook-secret-file FILE too: receivers verify each notice's signature with it")
	}
	if o.webhook == "" && o.webhookSecretFile != "" {
		return errors.New("-webhook-secret-file: give -webhook URL too")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// executors builds the HTTP executors, by tool.
func (o *serviceOptions) executors() (map[string]plug.Executor, error) {
	out := map[string]plug.Executor{}
	var shared []byte
	for _, t := range o.httpTools {
		file, create := t.SecretFile, false
		if file == "" {
			file, create = o.toolSecretFile, true
		}
		var secret []byte
		if file == o.toolSecretFile && shared != nil {
			secret = shared
		} else {
			s, err := secretFile(file, create)
			if err != nil {
				return nil, err
			}
			secret = s
			if file == o.toolSecretFile {
				shared = s
			}
		}
		retries := t.Retries
		if retries == 0 {
			retries = -1 // httpexec reads 0 as its default
		}
		e, err := httpexec.New(t.Tool, t.URL, secret, &httpexec.Options{Timeout: t.Timeout, Retries: retries})
		if err != nil {
			return nil, fmt.Errorf("-tool-url %s: %w", t.Tool, err)
		}
		out[t.Tool] = e
	}
	return out, nil
}

// webhook builds the notifier of -webhook, or nil.
func (o *serviceOptions) newWebhook() (*notify.Webhook, error) {
	if o.webhook == "" {
		return nil, nil
	}
	secret, err := secretFile(o.webhookSecretFile, false)
	if err != nil {
		return nil, err
	}
	hook, err := notify.NewWebhook(o.webhook, secret, nil)
	if err != nil {
		return nil, fmt.Errorf("-webhook: %w", err)
	}
	return hook, nil
}

// close stops what b started: the gate's background work (a practice
// request being placed) and the webhook's workers, given a few seconds
// to finish what is queued.
func (b built) close(ctx context.Context) {
	if b.gate != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = b.gate.Settle(sctx)
		cancel()
	}
	if b.hook != nil {
		closeWebhook(ctx, b.hook)
	}
	if b.marks != nil {
		_ = b.marks.Close()
	}
}

// closeWebhook stops hook's workers within five seconds.
func closeWebhook(ctx context.Context, hook *notify.Webhook) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = hook.Close(cctx)
}

// minSecretBytes is the shortest secret a secret file may hold.
const minSecretBytes = 32

// secretFile reads a shared secret: the file's bytes, surrounding white
// space trimmed, at least 32 of them. With create, a missing file is
// made (mode 0600) with 64 random hex digits, which the tool reads too.
func secretFile(file string, create bool) ([]byte, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && create {
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return nil, err
		}
		s := []byte(hex.EncodeToString(raw[:]) + "\n")
		if err := os.WriteFile(file, s, 0o600); err != nil {
			return nil, fmt.Errorf("create secret file %s: %w", file, err)
		}
		return s[:64], nil
	}
	if err != nil {
		return nil, fmt.Errorf("secret file %s: %w", file, err)
	}
	s := []byte(strings.TrimSpace(string(b)))
	if len(s) < minSecretBytes {
		return nil, fmt.Errorf("secret file %s: line 1: the secret is %d bytes; it must be at least %d", file, len(s), minSecretBytes)
	}
	return s, nil
}

// catalogOf is the catalog of tools and its tools' names; without tools
// (nil), the seed catalog (seedCatalog).
func catalogOf(tools []policy.Tool) (*policy.Catalog, []string, error) {
	var cat *policy.Catalog
	var err error
	if tools == nil {
		tools = stepuptest.SeedTools()
		cat, err = seedCatalog()
	} else {
		cat, err = policy.NewCatalog(stepuptest.SeedPolicyVersion, tools...)
	}
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return cat, names, nil
}
