// Package interop holds the independent verification of asu receipts: a
// Node.js verifier (verify.mjs) built on @simplewebauthn/server, a WebAuthn
// implementation no one working on asu wrote, and the Go test that feeds it
// receipts from the test signer and from a real gate.
//
// Install the verifier's dependencies once with
//
//	npm ci
//
// in this directory; without Node.js or node_modules the test skips.
package interop
