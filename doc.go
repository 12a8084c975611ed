// Package asu makes an AI agent's approval prompt a real second factor.
//
// Agent runtimes ask a person "approve this tool call?" in ways the agent
// itself can answer, narrate, replay or change after the fact. asu is the
// gate a runtime mounts instead: it canonicalizes the exact call, renders the
// approval card itself, has the approver's passkey sign a challenge bound to
// that exact call, and executes the stored call once.
//
// This package holds only this overview; the code lives in the packages
// below.
//
// # The promise
//
// An approval protects an action only if compromising the agent cannot
// produce it and it commits to exactly the action that executes. asu keeps
// seven properties, each in one place:
//
//   - P1 agent independence: the runtime sees only
//     [github.com/agentstepup/asu/stepup.Runtime]; approvals arrive only
//     through [github.com/agentstepup/asu/stepup/passkey] (a passkey
//     enrolled through an administrator's one-time invite), on an origin
//     the agent API never serves
//     ([github.com/agentstepup/asu/stepup/gateway]); a ticket is decided by
//     its own user or a group the policy names, never by an agent.
//   - P2 effect binding: [github.com/agentstepup/asu/canon] seals a call
//     into one canonical effect and one SHA-256 digest; the passkey signs a
//     challenge that commits to it, and
//     [github.com/agentstepup/asu/stepup/gate] runs the descriptor stored at
//     propose time, re-hashed, under the current policy.
//   - P3 freshness and single use: a 32-byte random nonce, an expiry judged
//     by the database's clock, and an atomic consume in
//     [github.com/agentstepup/asu/store], in the transaction that records
//     the intent to execute, under a lease and a fencing token.
//   - P4 trusted rendering: [github.com/agentstepup/asu/card] renders the
//     card from the canonical effect in code; agent text appears only in a
//     region labelled untrusted, and the card's hash is in the challenge.
//   - P5 non-repudiation: [github.com/agentstepup/asu/receipt] holds the
//     effect, card, nonce, expiry and raw WebAuthn assertion, verifiable
//     offline with only the approver's public key, and the hash-chained
//     audit log with signed checkpoints.
//   - P6 scope integrity: [github.com/agentstepup/asu/grant] — a delegated
//     approval covers exactly what it names, and fails closed.
//   - P7 flood resistance: [github.com/agentstepup/asu/flood] — rates,
//     lockouts and per-approver inflow keyed by principal, and pending caps
//     decided by the store so they hold across gateway replicas.
//
// # Architecture
//
// Each package imports only those above it in this list:
//
//	canon              canonical JSON, the value model, sealed effects, principal ids
//	card, receipt      the approval card; the challenge, receipts, audit chain, checkpoints
//	grant, store       delegated approvals; storage split by concern (memory, sqlite, postgres)
//	flood              admission of approval requests
//	stepup             the runtime's contract (standard library and canon only)
//	stepup/remote      the thin HTTP client of the runtime's contract
//	stepup/gate        the gate core: Policy, Approver, Renderer, Flood and Store interfaces
//	stepup/policy      the default policy: catalog, schemas, limits
//	stepup/passkey     WebAuthn approval, enrollment, receipts
//	stepup/exectoken   execution tokens for tools run in another service
//	stepup/gateway     the HTTP service: agent API and approval site
//	stepup/mcpgate     the gate in front of any MCP server
//	stepup/stepuptest  fake authenticator, harness, the reference world
//
// # The flow
//
//	runtime (untrusted)        gate (trusted, own process)                    approver (device)
//	Propose(call) ───────────▶ canon ─▶ policy ─▶ park ──── link only ───────▶ card page
//	                           (allow and deny answer at once)                     │ passkey signs
//	                           Approve(id, assertion) ◀─────────────── challenge = H(tag‖digest‖nonce‖exp‖cardhash)
//	Wait(id) ◀── status
//	Execute(id) ─────────────▶ consume nonce + record intent (one transaction)
//	                           ─▶ run the STORED call with the idempotency key ─▶ result, audit row
//
// The challenge is
//
//	SHA-256("asu/v1/approve" ‖ 0x00 ‖ digest[32] ‖ nonce[32] ‖ uint64be(expiry) ‖ cardhash[32])
//
// computed by [github.com/agentstepup/asu/receipt.Challenge], so third
// parties can recompute it.
//
// # The reference program
//
// The quickstart, and many tests, replay a small reference approval
// program: an agent with five tools (read_file, search_tickets, write_draft,
// send_email, issue_refund), whose send_email to finance@example.com with
// the attachment q3.csv needs a person's approval. Its seven cases must come
// out the same on every version of asu:
//
//  1. the approved call with its keys reordered executes;
//  2. the same approval used again is refused as used;
//  3. the recipient changed to finance@exarnple.com after approval is refused;
//  4. the attachment edited after approval is refused;
//  5. the approval used 20 minutes later is refused as expired;
//  6. the digest swapped in the evidence is refused as a bad signature;
//  7. the agent approving its own call is refused.
//
// # Where to start
//
// Run the quickstart, which walks the whole flow and the attacks it stops:
//
//	go run ./examples/quickstart
//
// Then read [github.com/agentstepup/asu/stepup] for the runtime's side,
// [github.com/agentstepup/asu/stepup/gate] for the gate, and
// [github.com/agentstepup/asu/stepup/stepuptest] for the fake
// authenticator that lets tests approve calls with real WebAuthn assertions.
package asu
