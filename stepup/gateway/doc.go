// Package gateway is the gate as an HTTP service: an agent API for
// runtimes in any language, its Go client (package remote), and the approval site where
// approvers see the card and answer with their passkeys. The two are
// separate handlers meant for separate listeners and origins: the agent
// API has no route that approves, enrolls or denies, and the approval site
// has no route a runtime uses (property P1).
//
// # Agent API
//
// [AgentAPI] serves these routes, JSON over HTTP:
//
//	POST /v1/propose               a call: {"tool", "args", "task", "step", "session",
//	                               "principal": {"user", "agent", "delegations"},
//	                               "taint", "rationale", "grant"}
//	GET  /v1/tickets/{id}/wait     ?timeout=30s: a long poll, bounded by [AgentOptions].MaxWait
//	POST /v1/tickets/{id}/execute  no body: execute runs the stored call
//	POST /v1/tickets/{id}/cancel   {"reason"}: withdraw a pending ticket
//	GET  /openapi.json             no token: the OpenAPI 3.1 document of these routes ([OpenAPI])
//
// A propose body is read strictly (member names spelled exactly, no
// duplicate keys anywhere, nothing after the object) and, when canon
// parses it, in that one pass: its arguments reach the gate in canonical
// form, the same JSON value the gate hashes.
//
// An execute, once asked, runs to its end even if the runtime's request
// ends first (its client's timeout, a dropped connection, a restart):
// cutting an approved tool off half-way would spend the approval on a
// half-done action. The call is bounded by the gate's own bounds (its
// execution lease), not by the request; a runtime that lost its answer
// waits on the ticket ([remote.Client.Wait]) to learn whether it was executed
// or failed, and never proposes it again.
//
// Each runtime has its own bearer token ([RuntimeToken]), kept only as its
// SHA-256 (which may be all a gateway is configured with) and compared in
// constant time, naming the agent principal it acts as: a call naming
// another agent is refused, and another agent's tickets do not exist for
// it. A call body is at most [MaxCallBytes] and is read strictly: member
// names exactly as above, no unknown or duplicate keys, nothing after the
// value. A denial is an answer, not an error: a ticket with status
// "denied" and a reason for the model.
//
// A denial is final and is not stored as a ticket (its audit row is the
// record of it): waiting on or executing a denied call's id answers
// not_found, whose message says so. A runtime acts on the denied answer
// of propose; it never needs to ask again.
//
// # Errors
//
// A refusal is {"error": {"code": ..., "also": [...], "message": ...}}
// with a stable code and a status: not_found 404, consumed 409, expired
// 410, revoked 410 (an approval revoked before it ran; it never runs),
// resolved, not_approved and effect_changed 409, policy_changed 409
// (decided under another policy version: propose again), outcome_unknown
// 503 (the call may have run; do not retry, wait for the ticket's final
// status), store 503 (the gate's store failed; not run unless the
// outcome is unknown too), config 500, bad_assertion 400, not_permitted
// 403, unauthorized 401, forbidden 403, invalid 400, too_large 413,
// unavailable 503 (the request ended first), internal 500. "also" lists
// the codes of the other sentinels the error wraps, so an unknown
// outcome that is also a store failure says both. The codes map to the
// stepup sentinels and this package's own; [remote.Client] maps them
// back, so errors.Is works the same, for every sentinel, against the
// in-process gate and against the service. A message never carries a
// store's or a configuration's text (hosts, users, files), whatever the
// code, nor an executor's; those stay in the server's log, the
// executor's not even there. A refused body's message quotes nothing the
// caller sent, member names included. Requests are logged by agent, tool,
// ticket, digest and code, never by argument.
//
// # Approval site
//
// [Site] serves the approval page of a ticket (the card the gate rendered
// from the stored effect, who may approve it, and passkey buttons), the
// approval, denial and revocation posts, and enrollment through an
// admin's invite. The link of an approved ticket offers to revoke the
// approval until it runs; a ticket's link that can no longer be decided
// says what became of it, in words. Its script and style
// are files from its own origin, so every response carries a strict
// [CSP] with nothing inline allowed, X-Frame-Options DENY, Referrer-Policy
// no-referrer, nosniff and no-store. Posts must come from the site's own
// origin and be JSON. Approving signs the ticket's challenge; denying signs
// receipt.DenyChallenge, derived from it and distinct from it, so a denial, too,
// needs the approver's passkey.
//
// # Card shown
//
// The gate's dwell time (gate.WithDwell) counts from the first time a
// ticket's card is shown, so the "card shown" post (POST
// /approve/{id}/shown) is taken only from the ticket's own page or from a
// signed-in approver ([SiteOptions].Sessions, such as the approvers'
// inbox) who may decide the ticket. Origin and fetch-metadata headers are
// not authentication: the agent holds its ticket's id and can send any
// header. Each rendering of the page carries a view token, a random view
// id under an HMAC ([SiteOptions].Key, shared by replicas) over the
// ticket id and the view id, checked in constant time; a client that
// never rendered the page has none, and a token names one ticket only.
//
// A client that fetches the page itself (the agent can: the link is the
// ticket's id) gets a token too. The gate counts the dwell from the
// first showing, so such a client can still start it before the person
// opens the page; closing that needs the gate to count from the latest
// verified showing (a later showing restarts the wait, so an agent can
// only delay its own ticket), or a deployment where approvers open
// tickets from a signed-in inbox. The site gives the gate every showing
// it verifies, and nothing else. Invites are minted with [InviteLink] from
// Go (an admin's program or command), never over HTTP.
//
// # Serving
//
// [NewServer] sets every timeout of an http.Server, with WriteTimeout
// above the long-poll bound; [Serve] serves a listener until its context
// ends, then drains long polls and shuts down gracefully.
package gateway
