// Package keyring holds the keys asu signs, MACs and seals with, so that
// they can be rotated without voiding what the old key made: the gate's
// approval MACs, the credential seals, the signed audit checkpoints and
// the execution tokens each record the id of the key that made them, and
// verification picks the key by that id.
//
// # Keys and states
//
// A [Ring] holds keys, each with an id, a secret of at least
// [MinSecretSize] bytes and a [State]:
//
//   - [Current]: exactly one key of a ring makes new MACs, seals, tokens
//     and signatures, and verifies;
//   - [Verify]: verifies only. A new key enters every replica in this
//     state before any replica makes it current;
//   - [Retired]: verifies only until its grace ends (Key.GraceUntil),
//     then verifies nothing.
//
// Whether a key still verifies is judged at a time the caller passes: the
// gate passes its store's clock, which all replicas share, so no two
// replicas disagree about a grace. A retired key past its grace is
// refused with a [*RetiredError] naming its id; each use wraps it in its
// own bad-evidence sentinel.
//
// Evidence made before key ids existed carries none: it verifies under
// any key of the ring that still verifies at the time, so stores in use
// keep working after an upgrade and through the first rotation's grace.
//
// # Ids
//
// A key's id is the same on every replica given the same key file: it is
// written in the file, or derived from the secret ([DefaultID]: a short
// hash under a tag, which reveals nothing about the secret).
//
// # Rotation
//
// [Ring.Add] adds a verify-only key, [Ring.Promote] makes a key current
// and retires the old current key with a grace, [Ring.Rotate] does both
// at once, and [Ring.Prune] drops keys whose grace ended. Each returns a
// new ring: a Ring never changes, so a [Live] holder can swap the ring a
// running service uses while requests read it. With several replicas,
// rotate in three steps so that no replica ever signs with a key another
// cannot verify yet: add the new key (verify-only) everywhere, then make
// it current everywhere, then let the old key's grace run out.
//
// # Files
//
// [Parse] and [Encode] read and write the line format of a key file
// (secrets: keep it mode 0600); [ParsePublic] and [EncodePublic] the same
// format for a ring's public half ([Ring.Public]), which verifiers outside
// the gate hold: executors checking execution tokens, auditors checking
// signed checkpoints. The Ed25519 key of a ring key is derived from its
// secret ([Key.Ed25519]).
//
// Comparisons of secrets and MACs are constant-time. Nothing here prints
// a secret: a Key's String and a ring's errors show ids only.
package keyring
