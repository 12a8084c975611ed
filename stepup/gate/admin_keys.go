package gate

import (
	"context"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/stepup/keyring"
)

// CheckpointWith is [Admin.Checkpoint] with a key ring that may rotate:
// the head is signed with the ring's current key (its Ed25519 key, see
// [keyring.Key.Ed25519]) and the checkpoint names that key ("kid"). A
// third party verifies it with the ring's public half
// (audit.VerifySignedCheckpoint, audit.VerifyChainFromKeys), under
// the key it names, while that key is in force.
func (ad *Admin) CheckpointWith(ctx context.Context, keys keyring.Source) (audit.SignedCheckpoint, error) {
	return ad.ad.CheckpointWith(ctx, keys)
}
