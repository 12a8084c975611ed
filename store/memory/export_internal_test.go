package memory

import "github.com/agentstepup/asu/receipt"

// TamperAudit is tamperAudit, for the conformance suite's corruption
// cases in package memory_test.
func TamperAudit(s *Store, r receipt.AuditRecord) { s.tamperAudit(r) }
