package keyring_test

import (
	"crypto/ed25519"

	"github.com/agentstepup/asu/stepup/keyring"
)

func sign(k keyring.Key, msg []byte) []byte { return ed25519.Sign(k.Ed25519(), msg) }
