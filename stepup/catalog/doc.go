// Package catalog reads the one catalog file format that the approval
// service (examples/gateway -catalog FILE) and the MCP gateway
// (stepup/mcpgate) decide with: the tools a team admits, how dangerous
// each is, the checks its arguments must pass, who approves it and where
// it runs, and the approver groups. A file is validated with its JSON
// Schema ([Schema]) and then with what a schema cannot say; every refusal
// is an [*Error] naming the file, line, column and the field's JSON
// pointer. [Parse] returns a [Catalog] ready for gate.New: its
// [Catalog.Policy], its [Catalog.ApproverGroups] (one
// gate.WithApproverGroup each) and the executor spec of each tool
// ([Catalog.Executors]).
//
// Policies live in version control with tests for what they must allow
// and what they must deny: a test file beside the catalog ([ParseTests])
// lists calls and the decision each must get, [Catalog.Check] runs it, and
// [Compare] shows what changes between two versions of a catalog.
// [DecodeJSON] reads any other JSON file a program is configured with
// (examples/gateway's -tokens file, say) with the same strictness and
// the same errors.
//
// # The catalog file
//
//	{
//	  "version": "2026-12-02.1",
//	  "groups": [{"name": "admins", "members": ["user:ann", "user:bob"]}],
//	  "tools": [
//	    {"name": "lookup_order", "class": "read"},
//	    {"name": "issue_refund", "class": "irreversible", "max_amount": {"amount": 500},
//	     "card": {"amount": "amount", "fixed_currency": "EUR"}},
//	    {"name": "delete_customer", "class": "irreversible", "approvers": "admins", "quorum": 2,
//	     "executor": {"url": "https://tools.internal/delete", "timeout": "10s", "retries": 2}}
//	  ]
//	}
//
// Top level (unknown fields are refused here and at every level below;
// so is a key given twice in one object, at any depth):
//
//   - version: the policy version, recorded with every decision and bound
//     into every approval. Optional: without it the version is "sha256:"
//     and 16 hex digits of the file's canonical JSON (RFC 8785), so any
//     change of substance changes it and reformatting does not. An
//     approval made under one version never executes under another:
//     changing the file voids the approvals in flight.
//   - tools (required): the admitted tools, at most 1000. A tool not
//     listed is denied.
//   - groups: approver groups, each {"name", "members"}: a name (letters,
//     digits, "_", ".", "-") and one to 1000 members, each a person's
//     principal id ("user:ann", lowercase; see canon.CheckPrincipalID),
//     none twice.
//   - $schema: ignored, for editors.
//
// A tool:
//
//   - name (required): what calls use; letters, digits, "_", ".", "-",
//     at most 128 bytes; not starting with the gate's reserved prefix;
//     unique.
//   - title: the card's heading (default: the name).
//   - class (required): read, reversible, external or irreversible. Read
//     and reversible calls are allowed; external and irreversible ones
//     need approval (after untrusted content, always).
//   - schema: a JSON Schema (draft 2020-12) the arguments must satisfy.
//     It must compile and may not load anything from outside the file.
//   - max_args_bytes: the canonical arguments' largest size, 2 to 1 MiB.
//   - max_length: {"arg": n}: string arguments' largest size in bytes.
//   - max_amount: {"arg": 500}: numeric arguments' largest value,
//     compared as exact decimals (policy.MaxAmount).
//   - allow_domains: {"arg": ["example.com"]}: address arguments must be
//     at these domains (policy.AllowDomains).
//   - refs: {"arg": "file"}: arguments that name content ("file", "url";
//     a program may add kinds, such as the MCP gateway's "path"), whose
//     hash is bound into the digest.
//   - unattended: true lets an external or irreversible call run without
//     approval while its session saw no untrusted content.
//   - approvers: the group that approves; without it, the user the call
//     runs for. It must be a group of the file (the MCP gateway also
//     accepts groups its program defines).
//   - quorum: how many distinct members must approve, 1 to 16; above 1
//     it needs approvers, a group at least that large.
//   - audience: the executor's name in execution tokens (default: the
//     tool's name).
//   - trusted: domains whose look-alikes the card flags.
//   - card: how the card lays out the arguments (card.Hints): labels
//     {"arg": "Label"}, order ["arg", ...], amount, currency (argument
//     names), fixed_currency (ISO 4217, e.g. "EUR"), recipient, units
//     {"arg": "kg"}, domains ["arg", ...].
//   - timeout: {"after": "15m", "outcome": ...}: how long approvers have
//     (a Go duration, positive) and then "cancel" (the default),
//     "escalate" to the group escalate_to, or "alternative", proposing
//     the read or reversible tool alternative instead.
//   - executor: where the service runs the tool:
//     {"url": "https://tools.internal/refund", "timeout": "10s", "retries": 2}.
//     url is required, http or https with a host and no user name;
//     timeout, per attempt, is a Go duration from 1ms to 10m (default
//     10s); retries, 0 to 10 (default 0), keep the idempotency key. The
//     MCP gateway refuses it: its upstream runs every tool.
//
// # The test file
//
//	{
//	  "principal": {"user": "user:dana", "agent": "agent:support"},
//	  "cases": [
//	    {"name": "a refund over the limit is refused", "tool": "issue_refund",
//	     "args": {"order": "A-17", "amount": 900},
//	     "want": {"decision": "deny", "reason": "over the per-call limit"}},
//	    {"name": "deleting a customer needs two admins", "tool": "delete_customer",
//	     "args": {"customer": "c-1042"},
//	     "want": {"decision": "needs_approval", "approvers": "admins", "quorum": 2}}
//	  ]
//	}
//
// principal, for the whole file or one case, is whom the call runs as
// (default [DefaultPrincipal]); taint lists the untrusted sources a
// case's session saw. want.decision is allow, deny or needs_approval;
// reason, when given, must be part of the policy's reason; approvers is
// the group, or the user the call runs for when the tool names none;
// quorum is how many must approve. By default the test file of
// catalog.json is catalog.test.json ([DefaultTests]):
//
//	go run ./examples/gateway policy test -catalog catalog.json
//	go run ./examples/gateway policy diff old/catalog.json catalog.json
package catalog
