package core

import "encoding/json"

// GrantArgs is the argument object of a [GrantTool] ticket: what the
// approver signs.
type GrantArgs struct {
	Grant     json.RawMessage `json:"grant"`
	Uses      int             `json:"uses"`
	ExpiresAt string          `json:"expires_at"` // RFC 3339, UTC, whole seconds: readable on the card
}
