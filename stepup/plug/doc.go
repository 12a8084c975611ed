// Package plug defines what a gate is assembled from and what its desk
// hands out, so that each part is written against a small contract rather
// than against the gate:
//
//   - [Policy] decides every call ([Proposal] in, [Decision] out); a
//     [Router] may say where a stored ticket goes without deciding again.
//     Package policy's Catalog is the default.
//   - [Approver] asks a person for an answer about a [Request], verifies
//     it ([Verified]) and re-verifies what was kept ([Answer]); a
//     [Receipter] also makes portable receipts. Package passkey is the
//     default; stepuptest has a fake.
//   - [Judge] is a model deciding calls of the classes it is given.
//   - [Store] is the store per concern; every backend in store/
//     implements it.
//   - [Canon] seals calls into canonical effects, [Renderer] draws the
//     card from one, [Grants] decides a grant's coverage of a call,
//     [Flood] admits requests for a person's attention, and an [Executor]
//     runs one tool's effect.
//
// [Prompt], [Entry], [GrantSpec] and [Runnable] are the values a gate's
// desk and runtime return. Package gate names every type here too, so a
// runtime that mounts a gate imports one package, while a policy or an
// approver imports only this one.
package plug
