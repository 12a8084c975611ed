package plug

import "strings"

// GrantTool is the tool of the tickets that ask an approver to issue a
// grant (the gate desk's Grant). Tool names starting with "asu." are the
// gate's own: a runtime proposing one is denied, and no executor may be
// registered for one.
const GrantTool = ReservedToolPrefix + "grant"

// ReservedToolPrefix starts the names of the gate's own tools.
const ReservedToolPrefix = "asu."

// ReservedTool reports whether tool names one of the gate's own tools
// (prefix [ReservedToolPrefix]): a runtime proposing one is denied, and no
// executor or catalog entry may use one.
func ReservedTool(tool string) bool { return strings.HasPrefix(tool, ReservedToolPrefix) }

// ExternalKeyPrefix marks the idempotency keys of tickets consumed by an
// executor in another service (package exectoken): the gate's recovery
// leaves them to that executor.
const ExternalKeyPrefix = "exec-"
