// Package exectoken runs approved calls in another service: the gate
// hands the runtime a short-lived execution token for an approved ticket
// instead of running the tool itself, and the service that holds the
// tool's credentials checks the token against the call it is about to run
// and spends the ticket, once.
//
// A [TokenIssuer] signs a token (a JWT, EdDSA, typed "asu-exec+jwt") for a
// ticket [gate.Gate.Runnable] passes, binding the ticket id, the
// effect's digest and nonce, the audience (the executor that may run it)
// and an expiry no later than the ticket's.
//
// A [Verifier], in the executor's service, shares the gate's store. Its
// [Verifier.Verify] checks the signature and claims, hashes the effect
// the service is about to run and compares it with the digest the token
// binds, asks its [Checker] (a gate over the same store and policy)
// whether the ticket may still run as Execute would, and spends the ticket
// under a lease with an idempotency key. [Verifier.Finish] records the
// outcome; [Verifier.Recover] lists the executions a crash interrupted,
// to be run again with the same idempotency key.
// Every refusal of a token the gate signed has its audit row.
//
// The signing key may rotate: [NewTokenIssuerRing] signs with a key
// ring's current key and names it in the token's "kid" header, and
// [NewVerifierRing] checks each token under the key it names while that
// key is in force (by the store's clock), so tokens issued before a
// rotation still spend their ticket during the old key's grace.
//
// P3 lives here for tools run elsewhere: what runs is what was approved,
// once, and an approval revoked, or decided under a policy the gates no
// longer run, does not run however long its token lives.
package exectoken
