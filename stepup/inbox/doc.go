// Package inbox is the approver's inbox on the approval site: an approver
// signs in with their passkey and sees their queue, every ticket they may
// decide, soonest expiry first, updated live, each with its card, the
// time left and who else may decide it, and approves or denies it with
// the passkey.
//
// # A session only lists
//
// Signing in runs package passkey's [passkey.SignIn], whose challenge is
// apart from every ticket's: a sign-in assertion never approves or denies
// anything, and a ticket's assertion never signs in. The session it opens
// is a cookie (HttpOnly, SameSite=Strict, Secure and "__Host-" on an
// https origin) holding the approver, the credential that signed in and
// an expiry, under a MAC. It is checked on every request, stream polls
// included: it ends when it expires ([DefaultSessionTTL]), on sign-out,
// and as soon as its credential is revoked. Sign-out ends the session on
// every replica sharing the gate's store, and after a restart: it is
// recorded in the store through the [Desk] ([gate.Desk.EndSession]), and
// every request and stream poll reads that record, so a copy of the
// cookie kept elsewhere opens nothing once its approver signed out. Both
// sides fail closed: a sign-out the store does not take still ends the
// session on this replica, is logged, and the approver is told it may
// still open elsewhere (and signs out again); a record that cannot be
// read refuses the request. It authorizes nothing but
// reading the queue: the [Desk] the inbox is given has no method that
// decides, and the approve and deny buttons sign the one ticket's own
// challenge (gate.Prompt's Options and DenyOptions) and post the
// assertion to the ticket's page on the approval site (gateway.Site's
// /approve/{id}), exactly as the ticket's link does.
//
// # Live
//
// The page reads its queue from a server-sent event stream: the whole
// queue on connect and whenever it changes (the stream reads it every
// [DefaultPoll]), a comment every [DefaultHeartbeat], and an "end" event
// when the session ends. Streams are bounded per approver
// ([DefaultStreamsPerApprover]; the next is refused with 429) and in all
// ([DefaultStreams]); each ends with its request, and [Inbox.Drain] ends
// them all for a graceful shutdown. A stream keeps its own write
// deadlines, so it outlives a server's WriteTimeout.
//
// # Serving
//
// Mount the inbox on the approval site's listener and origin, beside the
// site, at its prefix, and serve the mux through [Secure], so that the
// redirects the mux answers itself (GET /inbox, //x, /approve//id) carry
// the site's headers too:
//
//	mux := http.NewServeMux()
//	mux.Handle(in.Prefix()+"/", in)
//	mux.Handle("/", site)
//	srv.Handler = inbox.Secure(mux)
//
// The queue lists one line per request (tool, where the effect goes or
// how much, its class, time left, how many of the people it needs
// approved); focusing a line (the arrow keys, j/k, a click) opens it with
// its card, who approved it so far and who is awaited, and the buttons;
// Enter opens or closes it. The count is in the header. Everything the
// page shows of a session is cleared in one place whenever the session
// changes, so nothing of one approver stays on screen for the next.
//
// The gate refuses an approval sooner than its dwell time after the
// card was first shown (gate.WithDwell). Opening a request tells the
// gate its card is shown, and the gate answers how long until an
// approval from this screen is acceptable: the page holds the approve
// button that long, so the gate's dwell is the only one and the approver
// reads before the passkey is asked.
//
// Every response carries the approval site's headers ([CSP]: nothing
// inline, frame-ancestors 'none'; no-store). Posts must come from the
// relying party's origin and carry JSON, and bodies are bounded. The page
// is keyboard-friendly (j/k or the arrows to move, Enter to open or close,
// a to approve, d to deny, o to open the request's page)
// and thumb-friendly on a phone (full-width buttons at least 48 px high).
//
// Sign-in uses discoverable credentials (passkeys): the browser offers
// the site's passkeys without being told whose they are, so the page
// asks for no name and reveals no one's.
package inbox
