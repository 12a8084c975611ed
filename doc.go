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
//   - P1 agent independence: the gate runs outside the agent; the runtime
//     sees only [github.com/agentstepup/asu/stepup.Runtime] (propose, wait,
//     execute by ticket id). Approvals need the approver's own passkey,
//     enrolled through an administrator's one-time invite, and the approver
//     is never the requester.
//   - P2 effect binding: [github.com/agentstepup/asu/canon] turns a call
//     into one canonical effect and one SHA-256 digest; the passkey signs a
//     challenge that commits to it, and Execute runs the descriptor stored at
//     propose time.
//   - P3 freshness and single use: a 32-byte random nonce, an expiry, and an
//     atomic consume in [github.com/agentstepup/asu/store], in the same
//     transaction that records the intent to execute.
//   - P4 trusted rendering: [github.com/agentstepup/asu/card] renders the
//     card from the canonical effect in code; agent text appears only in a
//     region labelled untrusted, and the card's hash is in the challenge.
//   - P5 non-repudiation: [github.com/agentstepup/asu/receipt] holds the
//     effect, card, nonce, expiry and raw WebAuthn assertion, verifiable
//     offline with only the approver's public key.
//   - P6 scope integrity: a delegated approval covers exactly what it names.
//   - P7 flood resistance: pending caps per session and per user, decided by
//     the store so they hold across gateway replicas, and merging of
//     duplicate requests.
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
// Then read [github.com/agentstepup/asu/stepup] for the gate, and
// [github.com/agentstepup/asu/stepup/stepuptest] for the fake
// authenticator that lets tests approve calls with real WebAuthn assertions.
package asu
