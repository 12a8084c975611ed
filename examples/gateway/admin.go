package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/store"
)

// adminCommands are the commands that work against a gateway's store,
// running or not, and start no server. Each prints what it did, or what
// it found, and refuses bad input with an error naming the flag.
var adminCommands = map[string]func(ctx context.Context, w io.Writer, args []string) error{
	"invite":          runInvite,
	"approvers":       runApprovers,
	"revoke-passkey":  runRevokePasskey,
	"revoke-invite":   runRevokeInvite,
	"tickets":         runTickets,
	"revoke-approval": runRevokeApproval,
	"revoke-grant":    runRevokeGrant,
	"audit":           runAuditCommand,
	"watermark":       runWatermark,
	"reconcile":       runReconcile,
	"introduce":       runIntroduce,
}

// commandNames lists the admin commands, for usage messages.
func commandNames() string {
	names := make([]string, 0, len(adminCommands))
	for n := range adminCommands {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// adminFlags are the flags every admin command takes: the store, and who
// acts (named in the audit rows it writes).
type adminFlags struct {
	fs       *flag.FlagSet
	db, dsn  string
	by       string
	keyFile  string
	keys     string // the key ring file, if the gateway runs with -keys
	origin   string
	siteAddr string
	// watermark, when set, is the gateway's watermark file, which the
	// watermark and reconcile commands read (a running gateway holds it).
	watermark string
	markPeers []string // -watermark-peer, for the same commands
}

func newAdminFlags(name string, w io.Writer) *adminFlags {
	a := &adminFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	a.fs.SetOutput(w)
	a.fs.StringVar(&a.db, "db", "", "the gateway's SQLite `file`")
	a.fs.StringVar(&a.dsn, "postgres", "", "the gateway's PostgreSQL `DSN`")
	a.fs.StringVar(&a.by, "by", "operator:cli", "who acts, as the audit rows name them")
	a.fs.StringVar(&a.keyFile, "key-file", "", "the gateway's MAC key `file` (as the gateway was started with)")
	a.fs.StringVar(&a.keys, "keys", "", "the gateway's key ring `file` (as the gateway was started with)")
	a.fs.StringVar(&a.origin, "origin", "", "the approval site's `origin` (default http://localhost:PORT of -site-addr)")
	a.fs.StringVar(&a.siteAddr, "site-addr", defaultSiteAddr, "the approval site's listen `address`, for the default origin")
	return a
}

// parse parses args and refuses stray arguments.
func (a *adminFlags) parse(args []string, usage string) error {
	if err := a.fs.Parse(args); err != nil {
		return err
	}
	if a.fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; usage: %s %s", a.fs.Args(), a.fs.Name(), usage)
	}
	if strings.TrimSpace(a.by) == "" {
		return errors.New("-by: name who acts, e.g. operator:erin")
	}
	return nil
}

// open opens the gateway's existing store, and the gate and enrollment on
// it as the gateway builds them. The caller closes the store.
func (a *adminFlags) open(ctx context.Context) (store.Store, built, error) {
	addr, err := net.ResolveTCPAddr("tcp", a.siteAddr)
	if err != nil {
		return nil, built{}, fmt.Errorf("-site-addr: %w", err)
	}
	rp, err := relyingParty(a.origin, addr)
	if err != nil {
		return nil, built{}, err
	}
	st, _, err := openStore(ctx, a.db, a.dsn, true, nil)
	if err != nil {
		return nil, built{}, err
	}
	b, err := newGate(st, rp, options{keyFile: a.keyFile, keys: a.keys, watermark: a.watermark, markPeers: a.markPeers, db: a.db,
		dwell: gate.DefaultDwell}, io.Discard)
	if err != nil {
		st.Close()
		return nil, built{}, err
	}
	return st, b, nil
}

// runApprovers lists the passkeys of every person the gateway knows of:
// those named in its audit chain, its tickets and its runtime tokens file
// (-tokens), and any named with -user. The store keeps credentials by
// user, so a person enrolled but never named anywhere is listed with
// -user.
//
//	go run ./examples/gateway approvers -db asu.db
func runApprovers(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("approvers", w)
	var users multiFlag
	a.fs.Var(&users, "user", "also list this `user`'s passkeys (repeatable)")
	tokens := a.fs.String("tokens", "", "the gateway's runtime tokens `file`, whose users are listed too")
	if err := a.parse(args, "(-db FILE | -postgres DSN) [-user user:NAME]..."); err != nil {
		return err
	}
	for _, u := range users {
		if err := checkInvitee(u); err != nil {
			return fmt.Errorf("-user %s: %w", u, err)
		}
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	known, err := knownUsers(ctx, st, b.gate.Admin(), *tokens)
	if err != nil {
		return err
	}
	for _, u := range users {
		known[u] = true
	}
	names := make([]string, 0, len(known))
	for u := range known {
		names = append(names, u)
	}
	slices.Sort(names)
	var active, revoked, people int
	for _, u := range names {
		creds, err := st.CredentialsByUser(ctx, u)
		if err != nil {
			return fmt.Errorf("read the passkeys of %s: %w", u, err)
		}
		if len(creds) > 0 {
			people++
		}
		for _, c := range creds {
			state := "active"
			if !c.RevokedAt.IsZero() {
				state, revoked = "revoked "+c.RevokedAt.UTC().Format(time.RFC3339), revoked+1
			} else {
				active++
			}
			sealed := "sealed"
			if len(c.Seal) == 0 {
				sealed = "unsealed"
			}
			fmt.Fprintf(w, "%s  passkey %s  enrolled %s  %s  %s\n", u, credentialID(c.ID),
				c.CreatedAt.UTC().Format(time.RFC3339), sealed, state)
		}
	}
	fmt.Fprintf(w, "approvers: %d people with passkeys, %d active passkeys, %d revoked (of %d users known)\n",
		people, active, revoked, len(names))
	return nil
}

// knownUsers are the people the audit chain, the tickets and the tokens
// file name.
func knownUsers(ctx context.Context, log store.AuditLog, admin *gate.Admin, tokensFile string) (map[string]bool, error) {
	known := map[string]bool{}
	add := func(ids ...string) {
		for _, id := range ids {
			if strings.HasPrefix(id, canon.PrefixUser) && canon.CheckPrincipalID(id) == nil {
				known[id] = true
			}
		}
	}
	head, err := log.AuditHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("read audit head: %w", err)
	}
	last := uint64(max(head.Seq, 0))
	for from := uint64(1); from <= last; from += auditPage {
		page, err := log.AuditSeq(ctx, from, min(from+auditPage, last+1))
		if err != nil {
			return nil, fmt.Errorf("read audit chain: %w", err)
		}
		for _, r := range page {
			add(r.Principal.User, r.Approver)
			add(r.Principal.Delegations...)
		}
	}
	f := store.Filter{Limit: store.MaxListLimit}
	for {
		entries, next, err := admin.List(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("list tickets: %w", err)
		}
		for _, e := range entries {
			add(e.User)
			add(e.Approved...)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	if tokensFile != "" {
		tokens, _, err := runtimeTokens(tokensFile, "", "")
		if err != nil {
			return nil, err
		}
		for _, t := range tokens {
			add(t.Users...)
		}
	}
	return known, nil
}

// credentialID is how commands print and read a passkey's id.
func credentialID(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }

// runRevokePasskey revokes one passkey, by the id approvers prints: it
// never approves or denies again, and the approvals it made that have not
// run no longer run.
//
//	go run ./examples/gateway revoke-passkey -db asu.db -id ID -reason "phone lost"
func runRevokePasskey(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("revoke-passkey", w)
	id := a.fs.String("id", "", "the passkey's `id`, as the approvers command prints it")
	reason := a.fs.String("reason", "", "why, for the audit row")
	if err := a.parse(args, "(-db FILE | -postgres DSN) -id PASSKEY [-reason TEXT]"); err != nil {
		return err
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(*id))
	if *id == "" || err != nil || len(raw) == 0 || len(raw) > 1023 {
		return errors.New("-id: give the passkey's id as the approvers command prints it (base64url)")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cred, err := st.GetCredential(ctx, raw)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("-id %s: no passkey has that id (list them with the approvers command)", *id)
	} else if err != nil {
		return fmt.Errorf("read passkey: %w", err)
	}
	if !cred.RevokedAt.IsZero() {
		return fmt.Errorf("-id %s: the passkey of %s was already revoked at %s", *id, cred.User, cred.RevokedAt.UTC().Format(time.RFC3339))
	}
	if err := b.enroll.RevokeCredential(ctx, raw, a.by, *reason); err != nil {
		return err
	}
	fmt.Fprintf(w, "revoked passkey %s of %s: it approves nothing from now on, and its approvals that have not run never run\n", *id, cred.User)
	return nil
}

// runRevokeInvite revokes an invite not yet redeemed, given its link or
// token.
//
//	go run ./examples/gateway revoke-invite -db asu.db -invite 'http://localhost:8701/enroll?invite=...'
func runRevokeInvite(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("revoke-invite", w)
	inv := a.fs.String("invite", "", "the invite's `link` or token, as invite printed it")
	if err := a.parse(args, "(-db FILE | -postgres DSN) -invite LINK"); err != nil {
		return err
	}
	token := strings.TrimSpace(*inv)
	if u, err := url.Parse(token); err == nil && u.Query().Get("invite") != "" {
		token = u.Query().Get("invite")
	}
	if token == "" {
		return errors.New("-invite: give the invite's link or token, as the invite command printed it")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	switch err := b.enroll.RevokeInvite(ctx, token, a.by); {
	case errors.Is(err, passkey.ErrInvite):
		return errors.New("-invite: that is not an invite link or token")
	case errors.Is(err, stepup.ErrNotFound):
		return errors.New("-invite: no invite of this store has that token")
	case errors.Is(err, stepup.ErrConsumed):
		return errors.New("-invite: that invite was already redeemed: revoke the passkey it enrolled instead (see the approvers command)")
	case errors.Is(err, stepup.ErrRevoked):
		return errors.New("-invite: that invite was already revoked")
	case err != nil:
		return err
	}
	user, _ := inviteUserOf(token)
	fmt.Fprintf(w, "revoked the invite of %s: it enrolls no passkey\n", user)
	return nil
}

// inviteUserOf reads the user an invite token names, for messages only.
func inviteUserOf(token string) (string, bool) {
	_, u, ok := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(u)
	return string(b), ok && err == nil
}

// runTickets lists tickets, newest state as stored: by default those
// waiting for a person and those approved and not yet run.
//
//	go run ./examples/gateway tickets -db asu.db -state pending,approved
func runTickets(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("tickets", w)
	states := a.fs.String("state", "pending,approved", "comma-separated `states`: pending, approved, executing, done, failed, denied, expired, cancelled, revoked, abandoned")
	user := a.fs.String("user", "", "only the tickets of this `user`")
	limit := a.fs.Int("limit", 100, "list at most this many `tickets`")
	if err := a.parse(args, "(-db FILE | -postgres DSN) [-state pending,approved] [-user user:NAME]"); err != nil {
		return err
	}
	f := store.Filter{User: *user, Limit: store.MaxListLimit}
	for s := range strings.SplitSeq(*states, ",") {
		st := store.State(strings.TrimSpace(s))
		if !st.Valid() {
			return fmt.Errorf("-state: %q is not a ticket state (pending, approved, executing, done, failed, denied, expired, cancelled, revoked, abandoned)", s)
		}
		f.States = append(f.States, st)
	}
	if *limit <= 0 {
		return errors.New("-limit: must be positive")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	n := 0
	for n < *limit {
		entries, next, err := b.gate.Admin().List(ctx, f)
		if err != nil {
			return fmt.Errorf("list tickets: %w", err)
		}
		for _, e := range entries {
			if n == *limit {
				break
			}
			n++
			who := e.Approvers
			if who == "" {
				who = e.User
			}
			line := fmt.Sprintf("%s  %-9s  %s  for %s by %s  decided by %s", e.Ticket.ID, e.Ticket.Status, e.Ticket.Tool, e.User, e.Agent, who)
			if len(e.Approved) > 0 {
				line += "  approved so far by " + strings.Join(e.Approved, ", ")
			}
			if !e.Ticket.ExpiresAt.IsZero() {
				line += "  expires " + e.Ticket.ExpiresAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintln(w, line)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	fmt.Fprintf(w, "tickets: %d %s\n", n, *states)
	return nil
}

// runRevokeApproval revokes an approved ticket before it runs.
//
//	go run ./examples/gateway revoke-approval -db asu.db -ticket ID -reason "sent by mistake"
func runRevokeApproval(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("revoke-approval", w)
	id := a.fs.String("ticket", "", "the approved ticket's `id`")
	reason := a.fs.String("reason", "", "why, for the audit row")
	if err := a.parse(args, "(-db FILE | -postgres DSN) -ticket ID [-reason TEXT]"); err != nil {
		return err
	}
	if strings.TrimSpace(*id) == "" {
		return errors.New("-ticket: give the approved ticket's id (list them with the tickets command)")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := b.gate.Admin().RevokeTicket(ctx, stepup.TicketID(*id), a.by, *reason)
	switch {
	case errors.Is(err, stepup.ErrNotFound):
		return fmt.Errorf("-ticket %s: no ticket has that id", *id)
	case errors.Is(err, stepup.ErrConsumed), errors.Is(err, stepup.ErrResolved):
		return fmt.Errorf("-ticket %s: it can no longer be revoked: it is running, has run or was decided otherwise (%v)", *id, err)
	case err != nil:
		return err
	}
	fmt.Fprintf(w, "revoked the approval of ticket %s (%s): it never runs\n", t.ID, t.Tool)
	return nil
}

// runRevokeGrant revokes a grant: it covers no call from then on.
//
//	go run ./examples/gateway revoke-grant -db asu.db -grant ID
func runRevokeGrant(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("revoke-grant", w)
	id := a.fs.String("grant", "", "the grant's `id` (the id of the ticket that issued it)")
	reason := a.fs.String("reason", "", "why, for the audit row")
	if err := a.parse(args, "(-db FILE | -postgres DSN) -grant ID [-reason TEXT]"); err != nil {
		return err
	}
	if strings.TrimSpace(*id) == "" {
		return errors.New("-grant: give the grant's id")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	switch err := b.gate.Admin().RevokeGrant(ctx, *id, a.by, *reason); {
	case errors.Is(err, stepup.ErrNotFound):
		return fmt.Errorf("-grant %s: no grant has that id", *id)
	case errors.Is(err, stepup.ErrRevoked):
		return fmt.Errorf("-grant %s: already revoked", *id)
	case err != nil:
		return err
	}
	fmt.Fprintf(w, "revoked grant %s: it covers no call from now on\n", *id)
	return nil
}

// runAuditCommand exports the audit chain (JSON Lines), as -audit does.
//
//	go run ./examples/gateway audit -db asu.db -out audit.jsonl
func runAuditCommand(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("audit", w)
	out := a.fs.String("out", "", "write the chain to this new `file` (JSON Lines)")
	key := a.fs.String("checkpoint-key", "", "ed25519 PEM `file` that signs a checkpoint of the head (created if missing)")
	if err := a.parse(args, "(-db FILE | -postgres DSN) -out FILE [-checkpoint-key FILE]"); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out: name the new file to write the audit chain to")
	}
	return runAudit(ctx, w, options{db: a.db, postgres: a.dsn, audit: *out, checkpointKey: *key, keyFile: a.keyFile,
		origin: a.origin, siteAddr: a.siteAddr, dwell: gate.DefaultDwell})
}

// checkInvitee says, in an invite's own words, why user cannot be
// invited to approve. The error wraps stepup.ErrNotPermitted.
func checkInvitee(user string) error {
	switch {
	case strings.HasPrefix(user, canon.PrefixAgent):
		return notInvitable("an agent cannot be invited: approvers are people (user:NAME), never an agent principal")
	case strings.HasPrefix(user, canon.PrefixGroup):
		return notInvitable("a group cannot be invited: invite each of its members (user:NAME)")
	case canon.Reserved(user):
		return notInvitable("that kind of name is the gate's own (policy:, grant:, model:): invite a person (user:NAME)")
	case !strings.HasPrefix(user, canon.PrefixUser) || canon.CheckPrincipalID(user) != nil:
		return notInvitable("name the person to invite as user:NAME")
	}
	return nil
}

// notInvitable is an invite refused for whom it names: its message is the
// invite's, and it is a stepup.ErrNotPermitted.
type notInvitable string

func (e notInvitable) Error() string { return string(e) }
func (e notInvitable) Unwrap() error { return stepup.ErrNotPermitted }

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
