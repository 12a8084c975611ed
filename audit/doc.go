// Package audit is the gate's audit trail: one [Record] per decision,
// hash-chained so that deleting, inserting, reordering or editing a row is
// found, the JSON Lines export of a chain, and the checkpoints the gate
// signs so that a window of a chain verifies on its own.
//
// # The chain
//
// Each [Record] carries the hash of the one before it ([Record.ComputeHash]):
//
//	SHA-256("asu/v1/audit" ‖ 0x00 ‖ JCS(record with hash set to 64 zeros))
//
// [VerifyChain] checks a chain held in memory and returns a [*ChainBreak]
// (wrapping [ErrChainBroken]) at the first record that does not link.
// [WriteChain] and [ReadChain] move a chain as JSON Lines. [NewVerifier]
// reads and checks an export record by record in constant memory, for
// chains too long to hold.
//
// # Checkpoints
//
// A [Checkpoint] is a point of the chain the gate vouches for with its
// ed25519 key ([SignCheckpoint]). [VerifyChainFrom] and
// [VerifyChainFromKeys] verify an export that starts after a checkpoint,
// or one that starts at the first record and passes through it.
//
// # Dependencies
//
// The package imports only [github.com/agentstepup/asu/canon] and the
// standard library. The approval figures computed from records are in
// [github.com/agentstepup/asu/audit/figures]; receipts of approvals, which
// verify without any of this, are in [github.com/agentstepup/asu/receipt].
package audit
