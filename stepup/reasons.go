package stepup

// ReasonDeclined starts the Reason of a ticket cancelled because the
// person it was sent to declined to open its approval page (an MCP host's
// URL elicitation answered "decline"), not by its agent giving up.
const ReasonDeclined = "cancelled: the person declined to open the approval page"
