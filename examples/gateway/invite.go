package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/passkey"
)

// defaultSiteAddr is where the approval site listens unless -site-addr
// says otherwise; its port makes the default origin.
const defaultSiteAddr = "127.0.0.1:8701"

// runInvite is the invite command: it mints an enrollment invite in the
// store of a gateway, running or not, prints its link and exits. It
// starts no server, so it never collides with the running gateway's
// ports.
//
//	go run ./examples/gateway invite -db asu.db -user user:erin
func runInvite(ctx context.Context, w io.Writer, args []string) error {
	fs := flag.NewFlagSet("invite", flag.ContinueOnError)
	fs.SetOutput(w)
	db := fs.String("db", "", "the gateway's SQLite `file`")
	dsn := fs.String("postgres", "", "the gateway's PostgreSQL `DSN`")
	user := fs.String("user", "", "the `user` to invite, e.g. user:erin")
	origin := fs.String("origin", "", "the approval site's `origin` (default http://localhost:PORT of -site-addr)")
	siteAddr := fs.String("site-addr", defaultSiteAddr, "the approval site's listen `address`, for the default origin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: invite (-db FILE | -postgres DSN) -user user:NAME [-origin URL]")
	}
	if err := checkInvitee(*user); err != nil {
		return fmt.Errorf("invite -user %s: %w", *user, err)
	}
	addr, err := net.ResolveTCPAddr("tcp", *siteAddr)
	if err != nil {
		return fmt.Errorf("-site-addr: %w", err)
	}
	rp, err := relyingParty(*origin, addr)
	if err != nil {
		return err
	}
	st, _, err := openStore(ctx, *db, *dsn, true, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	enroll, err := passkey.NewEnrollment(st, rp)
	if err != nil {
		return err
	}
	link, err := gateway.InviteLink(ctx, enroll, rp.Origin, *user)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "enrollment link for %s (works once, for %v): %s\n", *user, passkey.DefaultInviteTTL, link)
	return nil
}
