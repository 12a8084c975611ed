package passkey

import (
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/stepup"
)

// Evidence is what the gate keeps of an approval: the raw WebAuthn
// assertion fields, byte for byte as the authenticator produced them, and
// the relying party they were checked against. With the ticket's effect,
// card, nonce and expiry and the credential's public key, it is everything
// a receipt needs; a third party re-verifies the signature from it alone.
type Evidence struct {
	// User is the approver the credential is enrolled for.
	User string `json:"user"`
	// CredentialID names the credential that signed.
	CredentialID []byte `json:"credential_id"`
	// AuthenticatorData, ClientDataJSON, Signature and UserHandle are the
	// assertion's fields; the signature covers
	// AuthenticatorData ‖ SHA-256(ClientDataJSON).
	AuthenticatorData []byte `json:"authenticator_data"`
	ClientDataJSON    []byte `json:"client_data_json"`
	Signature         []byte `json:"signature"`
	UserHandle        []byte `json:"user_handle"`
	// RPID and Origin are the relying party the assertion was checked for.
	RPID   string `json:"rp_id"`
	Origin string `json:"origin"`
}

// ParseEvidence decodes the Evidence stored with an approved ticket.
func ParseEvidence(raw []byte) (Evidence, error) {
	var e Evidence
	if err := json.Unmarshal(raw, &e); err != nil {
		return Evidence{}, fmt.Errorf("%w: evidence does not parse", stepup.ErrBadAssertion)
	}
	return e, nil
}

// complete reports whether e holds a whole WebAuthn assertion.
func (e Evidence) complete() bool {
	return e.User != "" && len(e.CredentialID) > 0 && len(e.AuthenticatorData) > 0 &&
		len(e.ClientDataJSON) > 0 && len(e.Signature) > 0 && e.RPID != "" && e.Origin != ""
}
