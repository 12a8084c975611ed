package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/stepup/gateway"
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

// newApprovalSite mounts the inbox beside the approval site made with
// sopts. With -key-file, the gate's key also MACs sign-ins, inbox
// sessions and the site's view tokens (each labelled apart), so a session
// or a page survives a restart and works on every replica; without it,
// each process has keys of its own. The inbox's signed-in approvers may
// say a card is shown (the site's Sessions) when the inbox can tell who
// is signed in.
func newApprovalSite(b built, rp passkey.RelyingParty, sopts gateway.SiteOptions, log *slog.Logger) (approvalSite, error) {
	var signInOpts []passkey.SignInOption
	iopts := &inbox.Options{Logger: log, Figures: func(ctx context.Context) (figures.Report, error) {
		return b.gate.Admin().Metrics(ctx, 7*24*time.Hour) // the header's "recently": the last week
	}}
	iopts.Dwell = b.dwell // the gate's dwell: the page holds the button as long as the gate refuses
	if b.dwell <= 0 {
		iopts.Dwell = -1 // -dwell 0: none
	}
	if b.key != nil {
		signInOpts = append(signInOpts, passkey.SignInKey(b.key))
		iopts.Key = b.key
	}
	signIn, err := passkey.NewSignIn(b.approver, signInOpts...)
	if err != nil {
		return approvalSite{}, err
	}
	in, err := inbox.New(b.gate.Desk(), signIn, rp, iopts)
	if err != nil {
		return approvalSite{}, err
	}
	if s, ok := any(in).(gateway.Sessions); ok {
		sopts.Sessions = s
	}
	site, err := gateway.NewSite(b.gate.Desk(), b.enroll, rp, &sopts)
	if err != nil {
		return approvalSite{}, err
	}
	mux := http.NewServeMux()
	mux.Handle(in.Prefix()+"/", in)
	mux.Handle("/", site)
	// The mux answers path-cleaning and trailing-slash redirects itself:
	// they too carry the site's headers.
	return approvalSite{Handler: inbox.Secure(mux), inbox: in}, nil
}
