package passkey

import (
	"fmt"
	"net/url"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/agentstepup/asu/stepup"
)

// RelyingParty is the approval site's WebAuthn identity: approvers' passkeys
// are scoped to ID and answer only on Origin, a listener the agent API
// never serves.
type RelyingParty struct {
	ID     string // e.g. "approve.example.com"
	Origin string // e.g. "https://approve.example.com"
	Name   string // shown by the authenticator at enrollment; empty means ID
}

// webAuthn checks rp and returns the go-webauthn relying party for it:
// user verification required, no attestation.
func (rp RelyingParty) webAuthn() (*webauthn.WebAuthn, error) {
	u, err := url.Parse(rp.Origin)
	switch {
	case rp.ID == "" || rp.Origin == "":
		return nil, fmt.Errorf("%w: relying party needs an ID and an origin", stepup.ErrConfig)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Hostname() != "localhost"):
		return nil, fmt.Errorf("%w: relying party origin must be an https origin", stepup.ErrConfig)
	}
	name := rp.Name
	if name == "" {
		name = rp.ID
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          rp.ID,
		RPDisplayName: name,
		RPOrigins:     []string{rp.Origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			UserVerification: protocol.VerificationRequired,
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
		},
		AttestationPreference: protocol.PreferNoAttestation,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: relying party: %v", stepup.ErrConfig, err)
	}
	return wa, nil
}
