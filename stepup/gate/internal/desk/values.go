package desk

import (
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
)

// Prompt is gate.Prompt, field for field, so that one converts to the
// other: package gate documents it.
type Prompt struct {
	Ticket        stepup.Ticket
	Card          *card.Card
	CardJSON      []byte
	Options       json.RawMessage
	Challenge     [32]byte
	DenyOptions   json.RawMessage
	DenyChallenge [32]byte
	Approvers     []string
	Progress      plug.Progress
}

// GrantSpec is gate.GrantSpec, field for field.
type GrantSpec struct {
	Grant     grant.Grant
	Uses      int
	ExpiresAt time.Time
}
