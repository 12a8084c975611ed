package gate

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
)

// Checkpoint signs the audit chain's head as it stands, with key (the
// gate's checkpoint key, ed25519): its sequence number, hash and time. A
// third party holding the public key then verifies an export that starts
// anywhere after it (receipt.VerifyChainFrom, the verify CLI's
// --checkpoint), and notices records deleted from the start of a chain.
// Publish checkpoints where the database's writers cannot rewrite them.
func (ad *Admin) Checkpoint(ctx context.Context, key ed25519.PrivateKey) (receipt.SignedCheckpoint, error) {
	if len(key) != ed25519.PrivateKeySize {
		return receipt.SignedCheckpoint{}, fmt.Errorf("checkpoint: %w: not an ed25519 private key", stepup.ErrConfig)
	}
	head, err := ad.g.st.AuditHead(ctx)
	if err != nil {
		return receipt.SignedCheckpoint{}, fmt.Errorf("checkpoint: %w: %v", stepup.ErrStore, err)
	}
	cp := receipt.CheckpointOf(head)
	sig, err := receipt.SignCheckpoint(key, cp)
	if err != nil {
		return receipt.SignedCheckpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return receipt.SignedCheckpoint{Checkpoint: cp, Sig: sig}, nil
}
