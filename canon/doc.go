// Package canon turns a tool call into the one byte string an approval
// commits to (property P2, effect binding): canonical JSON (RFC 8785), the
// effect it describes, and that effect's SHA-256 [Digest]. Everything else
// in asu that reads a call (the card, grants, receipts, policy limits)
// reads it through this package, so all of them see the same value.
//
// # Canonical JSON
//
// [Canonicalize] returns the RFC 8785 form of a JSON value, byte for byte
// what github.com/gowebpki/jcs gives, and refuses what it cannot hash
// faithfully: duplicate keys however they are escaped, invalid UTF-8, lone
// surrogates, numbers whose canonical form denotes another decimal
// (9007199254740993, 0.30000000000000001, 1e400), trailing data, and input
// over the size and depth [Limits]. Harmless differences (key order, white
// space, escapes, number spelling) give the same bytes; meaningful ones
// never do.
//
// # Values
//
// [Value] is the one model of a canonical JSON value: object members in
// canonical order, strings decoded, numbers as their canonical text.
// [ParseValue] builds it from canonical JSON in one pass and refuses any
// other spelling ([ErrNotCanonical]), so equal Values have equal texts.
// Numbers compare as exact decimals with [Value.Cmp] and [CompareDecimal]:
// a policy limit "500" and an amount "500.00" are equal, and no comparison
// goes through float64.
//
// # Effects
//
// An [Effect] is everything that determines what a call does: tool,
// arguments, resolved references, task and step, [Principal], policy
// version and audience. [Seal] canonicalizes it once into a [Sealed]: the
// canonical bytes, the digest and the arguments as a Value, immutable, to
// be handed from propose to card, grant, store and execute without
// returning to canon. [ParseSealed] reads a stored effect back and refuses
// any bytes [Seal] would not have written. [Effect.Canonical] and
// [Effect.Digest] are Seal in one call each.
//
// # Principals
//
// A principal id is lowercase ASCII "kind:name" ([CheckPrincipalID]): the
// kinds user, agent and group, and the kinds policy and grant that only
// the gate writes ([Reserved]). Look-alike spellings (Cyrillic letters,
// fullwidth forms, upper case, invisible characters) are not ids.
// [Principal.Check] checks the chain a call acts for.
//
// # References
//
// A [Ref] names content the arguments point at. A [Resolver] binds it to
// its SHA-256, so changing a file after approval changes the digest.
// [FileResolver] reads regular files under a root only, without following
// symlinks out of it, without blocking on a named pipe swapped in, and
// honouring its context while it reads.
//
// # Errors
//
// Refusals wrap one sentinel each ([ErrTooLarge], [ErrDuplicateKey],
// [ErrNumber], ...) for errors.Is; parse errors are an [*Error] with the
// byte offset. No error quotes the input: arguments may hold secrets, and
// errors reach logs.
package canon
