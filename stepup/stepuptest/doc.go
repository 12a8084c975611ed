// Package stepuptest is an in-process fake of asu's trust infrastructure
// for tests: a software WebAuthn authenticator whose registrations and
// assertions go-webauthn accepts, a fake clock, the catalog of the reference program's
// program, and a one-call [NewGate] harness with an enrolled approver.
//
// # Authenticator
//
// [Authenticator] creates ES256 or Ed25519 credentials with "none"
// attestation and answers request options as a browser and authenticator
// together would. [Tweak] values bend one ceremony (origin, RP ID,
// challenge, UP/UV/BE/BS flags, signature counter, credential, user
// handle) so a test can show each server-side check refusing.
//
// # Harness
//
// [NewGate] builds a gate on store/memory with a [Clock], enrolls
// [Approver] through the real invite and registration path, and returns a
// [Harness]; [Harness.Approve] runs the approver's whole round trip.
package stepuptest
