package desk

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/keyring"
)

// Checkpoint implements [gate.Admin.Checkpoint].
func (ad *Admin) Checkpoint(ctx context.Context, key ed25519.PrivateKey) (receipt.SignedCheckpoint, error) {
	if len(key) != ed25519.PrivateKeySize {
		return receipt.SignedCheckpoint{}, fmt.Errorf("checkpoint: %w: not an ed25519 private key", stepup.ErrConfig)
	}
	head, err := ad.g.core.St.AuditHead(ctx)
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

// CheckpointWith implements [gate.Admin.CheckpointWith]: the checkpoint
// of the head signed with the ring's current key, named by its id.
func (ad *Admin) CheckpointWith(ctx context.Context, keys keyring.Source) (receipt.SignedCheckpoint, error) {
	if keys == nil || keys.Ring() == nil {
		return receipt.SignedCheckpoint{}, fmt.Errorf("checkpoint: %w: no key ring", stepup.ErrConfig)
	}
	k := keys.Ring().Current()
	sc, err := ad.Checkpoint(ctx, k.Ed25519())
	if err != nil {
		return sc, err
	}
	sc.KeyID = k.ID
	return sc, nil
}
