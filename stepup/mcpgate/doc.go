// Package mcpgate puts the asu gate in front of any MCP server, for any
// MCP host: a proxy that offers the upstream server's tools to the host
// and lets each tools/call run only through a [stepup.Runtime], by ticket
// id, once.
//
// # Pieces
//
//   - [Upstream] starts or connects to the server ([Command] for a stdio
//     command, [HTTP] for a streamable HTTP endpoint), keeps its tool
//     listing current through tools/list_changed, restarts it with
//     backoff when it exits, and bounds every call in time and size, and
//     every message the server sends by [MaxFrameBytes] as it is read. Its
//     [Upstream.Executor] is the gate's executor: it runs the stored
//     effect against the server, once per idempotency key.
//   - [Catalog] is the integrator's file ([ParseCatalog], validated with
//     [CatalogSchema], errors with line numbers): each admitted tool's
//     effect class, argument limits, references to bind, approver group
//     and timeout. [StarterCatalog] prints one from a listing, worst case
//     by default. [Catalog.Policy] is the gate's policy: upstream
//     descriptions enter it only as untrusted card text.
//   - [Proxy] is the host-facing server, run on stdio
//     ([Proxy.Run]) or served over streamable HTTP with a bearer token
//     ([Proxy.HTTPHandler]), which closes host sessions idle for
//     [Options.SessionIdleTimeout] and refuses more than
//     [Options.MaxSessions] open at once, so hosts that vanish without
//     ending their sessions hold a bounded amount.
//
// # What a tools/call does
//
// The proxy proposes the call with the integrator's principal, the host
// session as the gate's session, and the session's taint. Allowed calls
// run at once; denied ones come back as tool errors (isError) whose text
// is the gate's reason. A call that needs a person waits:
//
//   - the approval link goes to the person, never into a tool result: as
//     a URL elicitation (elicitation/create, mode "url") when the host
//     declared that mode, otherwise as a log message (notifications/message,
//     once the host set a logging level), and the operator's OnPending;
//   - while it waits, a host that sent a progress token gets
//     notifications/progress every ProgressInterval, so a host that
//     resets its request timeout on progress keeps waiting;
//   - when the host cancels the request or times out, or the proxy's own
//     wait ends, the ticket is cancelled at once with a reason
//     ([ReasonHostCancelled]), so an approver who opens the link finds it
//     decided and nothing runs later;
//   - an identical call of the same session made while the first waits is
//     merged by the gate into the same ticket: the ticket is cancelled
//     only when the last of them gives up, and runs once for all. One
//     that joins while the last leaver withdraws the ticket calls the
//     withdrawal off (it cancels the Canceller's context); one that finds
//     the ticket withdrawn under it anyway proposes again and waits on a
//     fresh ticket.
//
// # Argument keys
//
// The gate reads an argument by its exact key; a Go MCP server's JSON
// reader matches keys to fields case-insensitively, by Unicode simple
// folding (bytes.EqualFold: "addreſs" with a long s is "address", the
// Kelvin sign is a k), the last match winning, and encoding/json/v2's
// case-insensitive matching also ignores '_' and '-'. Every catalog tool
// therefore denies arguments with two keys in one object, at any depth,
// that fold alike so, and a top-level key that folds to an argument the
// catalog names (a limit, a reference, a card hint) without being it:
// refused rather than checked as that argument, so the value the gate
// checked and the card shows is the only one a server can read.
//
// # Path references
//
// A catalog's "path" reference is bound by [PathResolver] as the
// filesystem server will resolve it: a leading "~" is the server's home
// (Home), a relative name is resolved against the server's first
// directory (Base), an existing path is taken at its real path, and a
// name that does not exist byte for byte is looked up by its NFC form, one
// component at a time. The object found must lie under the gateway's
// root. When it is spelled otherwise than the name, the reference names
// it (canon.Ref.Target): the digest covers it, the card shows it, and
// Execute refuses the call if the name has come to mean another object.
// A name the resolver cannot pin to one object that way is refused
// ([ErrPathUnresolvable]), never bound as absent: an integrator's own
// resolver for another server keeps the same contract (canon.Resolver).
//
// # Messages and schemas
//
// [Proxy.Run] and [Proxy.HTTPHandler] refuse a JSON-RPC message that
// names a member twice in any object, exactly or in two letter cases Go's
// JSON reader folds together ([StrictTransport]): what the gate decides
// on is the message's only reading. The host is shown each tool's input
// schema as the gate enforces it ([Options].EnforcedSchema), also after
// the upstream changes it, until the operator admits the change.
//
// Upstream annotations are hints only: the host is shown hints derived
// from the catalog's class ([SuggestClass] reads upstream's, worst case,
// for the starter catalog only). A tool the catalog does not admit,
// including one announced later through tools/list_changed, is offered
// and every call of it is denied as unknown.
//
// # A host that gives up
//
// When the host cancels a call or times out, the proxy withdraws its
// ticket through the runtime's stepup.Canceller (the in-process gate and
// the HTTP client have one): an approval given later runs nothing, and
// the approval page says the agent withdrew the request.
package mcpgate
