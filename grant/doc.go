// Package grant is delegated approval: a user approves once, and later
// calls that the approval names run without asking again (property P6,
// scope integrity). A grant covers only what it names. "Refunds are fine"
// is not a grant; "refund these three orders for these amounts" is.
//
// # Kinds
//
// A [Grant] is one of three kinds:
//
//   - [Exact]: one effect, by its canonical digest.
//   - [Plan]: a set of effects by digest, each usable once: the user
//     approves a plan whose steps are bound, not each keystroke.
//   - A [Template]: one tool, one audience, one user, and a [Rule] for
//     every argument: pinned values ([Pin]), numeric bounds ([Range]),
//     recipient domains ([InDomains]) or declared free text ([Text]). An
//     argument the template has no rule for is not covered, so an extra or
//     unknown argument makes the whole call uncovered; so does a rule whose
//     argument is missing.
//
// # Coverage
//
// [Covers] answers with a [Coverage] naming the first reason and argument
// not covered, never a bare bool, and fails closed: a malformed grant or
// an effect that cannot be hashed faithfully is an error, never covered.
// Values are compared as canonical JSON (package canon): strings byte for
// byte, numbers as exact decimals from their canonical text, never through
// float rounding, so a grant for an amount of 120 never covers 1200 or
// 120.0000001.
//
// # Storage and use
//
// A grant is stored as the canonical JSON of [Grant.Marshal] in a
// store.Grant, read back strictly by [Parse]. [Put] writes it with its
// user, uses and expiry; [Use] checks coverage and then takes one use in
// the store's atomic UseGrant, so a grant's uses and expiry hold across
// goroutines, processes and gate replicas sharing a store. A grant is
// revoked by revoking the record under the id Put returned; from then on
// it covers nothing, a plan's steps included, although each step has a
// record of its own ([Use] and [Target] judge every step by its plan's
// record). A gate calls Use before it would park a call for approval; a
// refusal means "ask a person", never "deny".
package grant
