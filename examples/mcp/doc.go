// Command mcp is an MCP gateway: it serves the tools of any MCP server to
// any MCP host, and every tools/call runs only through the asu gate. Its
// logic is package stepup/mcpgate; README.md ("Gate your MCP servers")
// has the host configurations.
//
// # Running it
//
//	mcp -catalog files.catalog.json -root DIR -upstream-dir DIR -- npx -y @modelcontextprotocol/server-filesystem DIR
//
// starts the upstream server from the command after the flags (or
// connects to -upstream-url), reads the catalog file that admits its
// tools, and serves them to the host over stdio; with -listen ADDR it
// serves streamable HTTP at /mcp instead, to hosts presenting the bearer
// token in ASU_MCP_TOKEN. -print-catalog prints a starting catalog from
// the upstream's tool list, every tool irreversible (-trust-hints: the
// worst reading of its hints). Without an upstream it serves the reference
// program's tools, built in.
//
// A "path" reference is resolved as the filesystem server resolves it
// (a "~" is the command's HOME, a relative name is taken in
// -upstream-dir) and must lie under -root; one that cannot be pinned to
// one file is denied.
//
// The gate runs in the same process, its records in memory for the life
// of the process (-db FILE: an SQLite file, kept across restarts, every
// commit synced), and executes each approved call once against the
// upstream server. Stdout carries the protocol; the people's side goes to stderr:
// the catalog review, the approval site's address (-site-addr, default
// 127.0.0.1:8711, served as http://localhost:PORT so passkeys work
// without TLS on one machine), a one-time enrollment link for the
// approver (-approver) and, for each call that waits for a person, its
// approval link, which the host is also sent (URL elicitation, or a log
// message with progress notifications).
//
// With -gateway URL the calls go instead to an asu gateway's agent API
// (see examples/gateway), with the runtime token read from the
// ASU_RUNTIME_TOKEN environment variable. -agent defaults to the gateway
// example's agent:reports, and a token for another principal is an error
// at start-up.
//
// # Demo
//
//	go run ./examples/mcp -demo
//
// connects an in-memory host to the gateway in front of the built-in tools
// and prints what the model reads back: an allowed read_file; a send_email
// that waits while the demo, standing in for the approver, reads the card
// and approves it with a software passkey; a denied run_shell; and a second
// send_email with a look-alike recipient, which is a new ticket the demo's
// approver denies.
package main
