package gateway

import (
	"strings"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/remote"
)

// words says in a person's words why the approval site refused, by error
// code. Pages show it, and posts answer with it as the error's message, so
// the page's script shows a sentence rather than a sentinel's text.
var words = map[string]string{
	remote.CodeNotFound:       "There is no such request.",
	remote.CodeResolved:       "This request was already decided.",
	remote.CodeExpired:        "This request expired before anyone decided it. The agent has to ask again.",
	remote.CodeRevoked:        "This approval was revoked. It will never run.",
	remote.CodeEffectChanged:  "The action no longer matches what was stored, so it cannot be approved.",
	remote.CodeNotApproved:    "This request cannot be approved.",
	remote.CodePolicyChanged:  "The rules changed since this request was made, so it cannot be approved or run. The agent has to ask again.",
	remote.CodeOutcomeUnknown: "The action may have run, but its outcome is not recorded yet. The gate finishes it by itself; do not ask for it again.",
	remote.CodeConsumed:       "This approval was already used: the action ran or is running.",
	remote.CodeNotPermitted:   "Your passkey may not decide this request: the page says who may.",
	remote.CodeTooFast:        "That was too soon after the request was shown. Read it through, then approve again with your passkey.",
	remote.CodeBadAssertion:   "Your passkey's answer did not verify for this request. Reload the page and try again.",
	remote.CodeForbidden:      "Requests must come from this site's own pages.",
	remote.CodeInvalid:        "The request was malformed.",
	remote.CodeTooLarge:       "The request was too large.",
	remote.CodeUnavailable:    "The service did not answer in time. Try again.",
	remote.CodeInternal:       "Something went wrong on the service. Try again later.",
	remote.CodeStore:          "The service could not read or write its records just now. Try again later.",
	remote.CodeConfig:         "The service is not set up right. Tell the administrator.",
	CodeUnknownCred:           "This passkey is not enrolled here.",
	CodeCounter:               "This passkey's signature counter did not advance; it may have been cloned. Tell the administrator.",
	CodeInvite:                "This invite is unknown, already used or expired. Ask the administrator for a new one.",
	CodePlugin:                "Part of the service did not answer properly just now, so nothing was decided. Try again later.",
}

// pageWords are the words of a page that cannot be shown where they
// differ from a post's: an approval page is refused as not permitted when
// nobody who may approve the ticket has a passkey yet.
var pageWords = map[string]string{
	remote.CodeNotPermitted: "Nobody who may approve this request has a passkey enrolled here yet. " +
		"Ask the administrator for an enrollment invite, enroll a passkey, then open this link again.",
}

// verdicts says in a person's words what became of a ticket that can no
// longer be decided, by status.
var verdicts = map[stepup.Status]string{
	stepup.StatusDenied:    "This request was denied. The agent was told so.",
	stepup.StatusExpired:   words[remote.CodeExpired],
	stepup.StatusCancelled: "This request was cancelled by the agent before a decision. Nothing ran.",
	stepup.StatusRevoked:   words[remote.CodeRevoked],
	stepup.StatusExecuting: "This request was approved and is running now.",
	stepup.StatusExecuted:  "This request was approved and has run. It never runs again.",
	stepup.StatusFailed:    "This request was approved and ran; the tool reported a failure. It never runs again.",
	stepup.StatusAbandoned: "This request was approved but never ran: the action changed, or no tool could run it. It never runs.",
}

// timedOut says what became of a ticket the gate cancelled because nobody
// decided it in time.
const timedOut = "Nobody decided this request in time, so it was cancelled. Nothing ran."

// declined says what became of a ticket cancelled because the person it
// was sent to declined to open it.
const declined = "The person this request was sent to declined to open it, so it was cancelled. Nothing ran."

// verdict says what became of ticket t, which can no longer be decided.
func verdict(t stepup.Ticket) (string, bool) {
	if t.Status == stepup.StatusCancelled && strings.HasPrefix(t.Reason, stepup.ReasonNoDecision) {
		return timedOut, true
	}
	if t.Status == stepup.StatusCancelled && strings.HasPrefix(t.Reason, stepup.ReasonDeclined) {
		return declined, true
	}
	text, ok := verdicts[t.Status]
	return text, ok
}

// say returns the words for a refusal code, or fallback.
func say(code, fallback string) string {
	if w, ok := words[code]; ok {
		return w
	}
	if w, ok := decideWords[code]; ok {
		return w
	}
	return fallback
}
