package passkey_test

import (
	"encoding/base64"

	"github.com/agentstepup/asu/canon"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func agentFor(user string) canon.Principal {
	return canon.Principal{User: user, Agent: "agent:reports"}
}
