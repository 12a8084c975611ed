// Package plug defines the small contracts a gate's parts are written
// against, so that a policy, an approver, a model judge, a grant check or
// an executor is written without importing the gate:
//
//   - [Policy] decides every call ([Proposal] in, [Decision] out); a
//     [Router] may say where a stored ticket goes without deciding again.
//     Package policy's Catalog is the default.
//   - [Approver] asks a person for an answer about a [Request], verifies
//     it ([Verified]) and re-verifies what was kept ([Answer]). Package
//     passkey is the default; stepuptest has a fake.
//   - [Judge] is a model deciding calls of the classes it is given, with
//     a [Judgment].
//   - [Coverage] decides a grant's coverage of a call, and an [Executor]
//     runs one tool's effect.
//   - [Watermarks] keeps the gate's high-water marks outside its store.
//
// [Entry] and [Runnable] are values a gate's desk and runtime return.
//
// # A leaf
//
// Package plug depends on the standard library and on asu's canon (with
// the RFC 8785 number formatter canon uses) and stepup only: a part's
// author links none of the card renderer, the stores, WebAuthn or flood
// control. A test holds it to that (go list -deps). Contracts whose values
// belong to a heavier package are declared next to those values or their
// consumer instead: the store a gate keeps is store.Gate (with
// store/storetest to hold a backend to it), and the card renderer, flood
// control and a receipt-making approver are package gate's Renderer,
// Flood and Receipter.
package plug
