package memory

import (
	"github.com/agentstepup/asu/audit"
)

// TamperAudit is tamperAudit, for the conformance suite's corruption
// cases in package memory_test.
func TamperAudit(s *Store, r audit.Record) { s.tamperAudit(r) }
