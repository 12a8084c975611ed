// Package interop holds the independent verification of asu receipts: a
// Node.js verifier (verify.mjs) built on @simplewebauthn/server, a WebAuthn
// implementation no one working on asu wrote, and the Go test that feeds it
// receipts from the test signer and from a real gate.
//
// Both it (vectors.mjs) and a verifier in Python (python/verify.py, on the
// cryptography package) check every published vector in
// receipt/testdata/vectors, and the tests require each verdict to be
// receipt's own.
//
// Install the Node.js verifier's dependencies once with
//
//	npm ci
//
// in this directory; without Node.js or node_modules its tests skip. The
// Python test skips without python3 and cryptography (Debian:
// python3-cryptography), unless ASU_PYTHON_INTEROP is set, as CI sets it.
package interop
