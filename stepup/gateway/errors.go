package gateway

import (
	"net/http"
	"slices"

	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/remote"
)

// Stable error codes of the approval site's own refusals, beside the agent
// API's (remote.Code...).
const (
	CodeUnknownCred = "unknown_credential"
	CodeCounter     = "counter"
	CodeInvite      = "invalid_invite"
	// CodePlugin is a plug-in of the gate (its approver, renderer, ...)
	// that panicked, hung past its deadline or answered too late: nothing
	// it said was used. Retryable; the detail stays in the server's log.
	CodePlugin = "plugin_misbehaved"
)

// siteCodes are the approval site's rows of the error table.
var siteCodes = []remote.Code{
	{Err: passkey.ErrUnknownCredential, Code: CodeUnknownCred, Status: http.StatusForbidden, Detail: true},
	{Err: passkey.ErrCounter, Code: CodeCounter, Status: http.StatusForbidden, Detail: true},
	{Err: passkey.ErrInvite, Code: CodeInvite, Status: http.StatusForbidden, Detail: true},
	{Err: plug.ErrMisbehaved, Code: CodePlugin, Status: http.StatusServiceUnavailable},
}

// agentCodes are the agent API's rows of the error table: the site's,
// and the store and configuration rows a runtime tells apart.
var agentCodes = append(slices.Clone(siteCodes), remote.RuntimeCodes()...)

// classify returns the code, status and client-safe message of an error
// of the approval site.
func classify(err error) (code string, status int, msg string) {
	return remote.Classify(err, append(slices.Clone(decideCodes), siteCodes...)...)
}

// classifyAgent is how the agent API answers err.
func classifyAgent(err error) remote.Refusal {
	return remote.ClassifyAll(err, agentCodes...)
}
