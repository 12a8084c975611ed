// Command mcp is a Model Context Protocol server whose tools run only
// through the asu gate. The agent's MCP client connects to it as to any
// tool server; every tools/call it receives becomes a stepup.Call that the
// gate decides, and a call runs only by the gate's Execute, by ticket id.
//
// # Running it
//
//	go run ./examples/mcp
//
// serves MCP over stdio, so an agent host starts it as a server command
// (for example "command": "go", "args": ["run", "./examples/mcp"]). The
// gate runs in the same process on an SQLite store in a temporary
// directory, with the reference program's tools run by an executor that only records.
// Stdout carries the protocol; the people's side goes to stderr: the
// catalog review, the approval site's address (-site-addr, default
// 127.0.0.1:8711, served as http://localhost:PORT so passkeys work
// without TLS on one machine), a one-time enrollment link for the
// approver (-approver) and, for each call that waits for a person, its
// approval link.
//
// With -gateway URL the calls go instead to an asu gateway's agent API
// (see examples/gateway), with the runtime token read from the
// ASU_RUNTIME_TOKEN environment variable: the gate and its approval site
// then run outside the agent's process.
//
// # What a tools/call does
//
// The handler (gatedServer) proposes the call with the tool name, the
// arguments as JSON, the MCP session as the gate's session (a random id
// per connection when the transport has none) and the principal of the
// configuration (-user, -agent). Nothing in the request, neither its
// arguments nor its _meta, can name or change the principal.
//
//   - Allowed: it executes the ticket and returns the executor's output.
//   - Denied: a tool result with isError set and the gate's reason, an
//     observation for the model like any tool error.
//   - Needs approval: the approval link goes to the approver, never to the
//     model. The handler waits for the decision, bounded by -wait and the
//     request's own context, then executes by ticket id: what runs is the
//     call the gate stored, never arguments resent by the model. Denied,
//     cancelled or expired tickets, and waits that end first, are tool
//     errors with their reason.
//
// A read is how untrusted content reaches the model: once a tool of class
// read has answered in a session, the session is tainted, and its later
// calls carry "read the output of TOOL" to the gate. External and
// irreversible calls then need a person even where the catalog lets them
// run unattended, and the card shows what was read. Taint stays with its
// session.
//
// Two identical calls of one session made while the first still waits are
// one ticket (the gate merges them): one approval, and the tool runs once;
// the other call is told the approval was already used. The same call from
// another session is a ticket of its own. A call with changed arguments is
// a new ticket with a new digest and needs its own approval.
//
// # Catalog from upstream hints
//
// MCP servers annotate their tools with readOnlyHint, destructiveHint,
// idempotentHint and openWorldHint. These are hints that must not be
// trusted from an untrusted server: suggestClass turns them into a
// suggested effect class, taking the worst case, and confirmCatalog sets
// the suggestion next to the class the integrator wrote in code, which
// always stands. The upstream description goes to the catalog entry's
// Description, shown on the approval card only in the untrusted region.
// A tool the upstream server offers but the integrator did not admit
// (run_shell here) is offered and denied by the gate as unknown; a tool
// never offered is refused the same way, as a tool error. The hints
// this server advertises are derived from the confirmed classes.
//
// # Demo
//
//	go run ./examples/mcp -demo
//
// connects an in-memory MCP client to the server and prints what the model
// reads back: an allowed read_file; a send_email that waits while the demo,
// standing in for the approver, reads the card and approves it with a
// software passkey; a denied run_shell; and a second send_email with a
// look-alike recipient, which is a new ticket the demo's approver denies.
package main
