package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup/inbox"
	"github.com/agentstepup/asu/stepup/passkey"
)

// approvalSite is what the approval site's listener serves: the site's
// pages at /, and the approvers' inbox at /inbox/ on the same origin, so
// the inbox's buttons post to the site's ticket pages. Its Drain ends the
// inbox's open streams when the gateway shuts down.
type approvalSite struct {
	http.Handler
	inbox *inbox.Inbox
}

// Drain implements gateway.Drainer.
func (a approvalSite) Drain() { a.inbox.Drain() }

// newApprovalSite mounts the inbox beside site. With -key-file, the gate's
// key also MACs sign-ins and inbox sessions (each labelled apart), so a
// session survives a restart and works on every replica; without it,
// each process has keys of its own.
func newApprovalSite(site http.Handler, b built, rp passkey.RelyingParty, log *slog.Logger) (approvalSite, error) {
	var sopts []passkey.SignInOption
	iopts := &inbox.Options{Logger: log, Figures: func(ctx context.Context) (receipt.ApprovalMetrics, error) {
		return b.gate.Admin().Metrics(ctx, 7*24*time.Hour) // the header's "recently": the last week
	}}
	if b.key != nil {
		sopts = append(sopts, passkey.SignInKey(b.key))
		iopts.Key = b.key
	}
	signIn, err := passkey.NewSignIn(b.approver, sopts...)
	if err != nil {
		return approvalSite{}, err
	}
	in, err := inbox.New(b.gate.Desk(), signIn, rp, iopts)
	if err != nil {
		return approvalSite{}, err
	}
	mux := http.NewServeMux()
	mux.Handle(in.Prefix()+"/", in)
	mux.Handle("/", site)
	return approvalSite{Handler: mux, inbox: in}, nil
}
